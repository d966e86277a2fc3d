// A tgmm over several of the kernel's 128-column and 192-deep blocks, with
// groups of 161 rows (chunks of 54, 54 and 53), none, 80 (one full chunk),
// 19 and 801 (11 chunks, 10 of 73 and one of 71: three more than a task
// keeps packed, which share one slot).
// DEPTH, WIDTH and ELT are set by the test.
func.func @tgmm(%lhs: tensor<1061xDEPTHxELT>, %rhs: tensor<1061xWIDTHxELT>) -> tensor<5xDEPTHxWIDTHxELT> {
  %sizes = arith.constant dense<[161, 0, 80, 19, 801]> : tensor<5xi32>
  %0 = moe.tgmm %lhs, %rhs, %sizes : tensor<1061xDEPTHxELT>, tensor<1061xWIDTHxELT>, tensor<5xi32>
  return %0 : tensor<5xDEPTHxWIDTHxELT>
}
