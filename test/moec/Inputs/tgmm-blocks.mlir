// A tgmm over several of the kernel's 128-column and 192-deep blocks, the
// last of each partial, with rows for a hot group (three 64-row chunks), an
// empty group and a one-chunk group. DEPTH, WIDTH and ELT are set by the test.
func.func @tgmm(%lhs: tensor<260xDEPTHxELT>, %rhs: tensor<260xWIDTHxELT>) -> tensor<4xDEPTHxWIDTHxELT> {
  %sizes = arith.constant dense<[150, 0, 70, 40]> : tensor<4xi32>
  %0 = moe.tgmm %lhs, %rhs, %sizes : tensor<260xDEPTHxELT>, tensor<260xWIDTHxELT>, tensor<4xi32>
  return %0 : tensor<4xDEPTHxWIDTHxELT>
}
