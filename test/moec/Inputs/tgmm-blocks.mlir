// A tgmm over several of the kernel's 128-column and 192-deep blocks, with
// groups of 161 rows (chunks of 54, 54 and 53), none, 80 (one full chunk)
// and 19. DEPTH, WIDTH and ELT are set by the test.
func.func @tgmm(%lhs: tensor<260xDEPTHxELT>, %rhs: tensor<260xWIDTHxELT>) -> tensor<4xDEPTHxWIDTHxELT> {
  %sizes = arith.constant dense<[161, 0, 80, 19]> : tensor<4xi32>
  %0 = moe.tgmm %lhs, %rhs, %sizes : tensor<260xDEPTHxELT>, tensor<260xWIDTHxELT>, tensor<4xi32>
  return %0 : tensor<4xDEPTHxWIDTHxELT>
}
