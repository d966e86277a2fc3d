// RUN: moe-opt %s -split-input-file -verify-diagnostics

func.func @no_grid(%x: tensor<8xf32>) {
  // expected-error @+1 {{grid @mesh does not name a shard.grid}}
  %0 = moe.psum %x over @mesh ["expert"] : tensor<8xf32>
  return
}

// -----

// An axis of no shards (found by moe-fuzz-mutate: the shard count divided
// reduce_scatter's sizes, and a block split over it the host's).
// expected-error @+1 {{'moe.axes': axis 'data' has size 0; a mesh axis needs at least one shard}}
shard.grid @mesh(shape = 0x4) {moe.axes = ["data", "expert"]}
func.func @empty_axis(%y: tensor<64x64xf32>) {
  %0 = moe.reduce_scatter %y over @mesh ["expert", "data"] dim 0 : tensor<64x64xf32> -> tensor<8x64xf32>
  return
}


// -----

shard.grid @mesh(shape = 2x2)
func.func @unnamed_axes(%x: tensor<8xf32>) {
  // expected-error @+1 {{grid @mesh has no 'moe.axes' attribute naming its axes}}
  %0 = moe.psum %x over @mesh ["expert"] : tensor<8xf32>
  return
}

// -----

shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}
func.func @no_axes(%x: tensor<8xf32>) {
  // expected-error @+1 {{expects at least one grid axis}}
  %0 = moe.psum %x over @mesh [] : tensor<8xf32>
  return
}

// -----

shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}
func.func @axis_twice(%x: tensor<8xf32>) {
  // expected-error @+1 {{names grid axis 'expert' twice}}
  %0 = moe.psum %x over @mesh ["expert", "expert"] : tensor<8xf32>
  return
}

// -----

shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}
func.func @unknown_axis(%x: tensor<8xf32>) {
  // expected-error @+1 {{grid @mesh has no axis named 'model' (axes: ["data", "expert"])}}
  %0 = moe.psum %x over @mesh ["model"] : tensor<8xf32>
  return
}

// -----

shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}
func.func @gather_element(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{result element type 'bf16' does not match input element type 'f32'}}
  %0 = moe.all_gather %x over @mesh ["expert"] dim 0 : tensor<8x4xf32> -> tensor<16x4xbf16>
  return
}

// -----

shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}
func.func @gather_rank(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{result rank (1) does not match input rank (2)}}
  %0 = moe.all_gather %x over @mesh ["expert"] dim 0 : tensor<8x4xf32> -> tensor<64xf32>
  return
}

// -----

shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}
func.func @gather_dim_range(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{dim (2) is out of range for rank 2}}
  %0 = moe.all_gather %x over @mesh ["expert"] dim 2 : tensor<8x4xf32> -> tensor<16x4xf32>
  return
}

// -----

shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}
func.func @gather_other_dim(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{result dimension 1 (5) does not match input dimension 1 (4)}}
  %0 = moe.all_gather %x over @mesh ["expert"] dim 0 : tensor<8x4xf32> -> tensor<16x5xf32>
  return
}

// -----

shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}
func.func @gather_size(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{result dimension 0 (8) must be 4 shards x input dimension (8)}}
  %0 = moe.all_gather %x over @mesh ["data", "expert"] dim 0 : tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}
func.func @scatter_uneven(%x: tensor<9x4xf32>) {
  // expected-error @+1 {{input dimension 0 (9) must split evenly into 2 shards of the result dimension (4)}}
  %0 = moe.reduce_scatter %x over @mesh ["expert"] dim 0 : tensor<9x4xf32> -> tensor<4x4xf32>
  return
}

// -----

shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}
func.func @a2a_scalar(%x: tensor<f32>, %c: tensor<2xi32>) {
  // expected-error @+1 {{rows must have at least one dimension}}
  %0, %1 = moe.all_to_all %x, %c over @mesh ["expert"] : tensor<f32>, tensor<2xi32> -> tensor<f32>
  return
}

// -----

shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}
func.func @a2a_element(%x: tensor<8x4xf32>, %c: tensor<2xi32>) {
  // expected-error @+1 {{received type 'tensor<8x4xbf16>' must have the element type and rank of rows 'tensor<8x4xf32>'}}
  %0, %1 = moe.all_to_all %x, %c over @mesh ["expert"] : tensor<8x4xf32>, tensor<2xi32> -> tensor<8x4xbf16>
  return
}

// -----

shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}
func.func @a2a_row_width(%x: tensor<8x4xf32>, %c: tensor<2xi32>) {
  // expected-error @+1 {{received dimension 1 (5) does not match rows dimension 1 (4)}}
  %0, %1 = moe.all_to_all %x, %c over @mesh ["expert"] : tensor<8x4xf32>, tensor<2xi32> -> tensor<8x5xf32>
  return
}

// -----

shard.grid @mesh(shape = 2x4) {moe.axes = ["data", "expert"]}
func.func @a2a_counts(%x: tensor<8x4xf32>, %c: tensor<2xi32>) {
  // expected-error @+1 {{send_counts length (2) does not match shard count along the axes (4)}}
  %0, %1 = moe.all_to_all %x, %c over @mesh ["expert"] : tensor<8x4xf32>, tensor<2xi32> -> tensor<8x4xf32>
  return
}

// -----

// expected-error @+1 {{'moe.axes' names 1 axes but the grid has 2}}
shard.grid @mesh(shape = 2x2) {moe.axes = ["data"]}

// -----

// expected-error @+1 {{'moe.axes' names axis 'data' twice}}
shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "data"]}

// -----

// expected-error @+1 {{'moe.axes' has an empty axis name}}
shard.grid @mesh(shape = 2) {moe.axes = [""]}

// -----

// expected-error @+1 {{'moe.axes' must be an array of strings}}
shard.grid @mesh(shape = 2) {moe.axes = [1]}

// -----

// expected-error @+1 {{'moe.axes' may only be placed on a shard.grid}}
func.func @not_a_grid() attributes {moe.axes = ["data"]} {
  return
}

// -----

// expected-error @+1 {{unknown moe dialect attribute 'moe.shards'}}
func.func @unknown_attr() attributes {moe.shards = 1} {
  return
}

// -----

// expected-error @+1 {{'moe.mesh' must name a shard.grid, on a function}}
func.func @mesh_not_a_symbol() attributes {moe.mesh = 1} {
  return
}

// -----

// expected-error @+1 {{'moe.mesh': @nowhere does not name a shard.grid}}
func.func @mesh_missing() attributes {moe.mesh = @nowhere} {
  return
}

// -----

// A per-shard function's host and backward read the grid's axis names and
// sizes: both must be there.
shard.grid @unnamed(shape = 2)
// expected-error @+1 {{'moe.mesh': @unnamed has no 'moe.axes' naming its axes}}
func.func @mesh_unnamed() attributes {moe.mesh = @unnamed} {
  return
}

// -----

shard.grid @open(shape = ?) {moe.axes = ["expert"]}
// expected-error @+1 {{'moe.mesh': @open has an axis of dynamic size; a per-shard function runs on a mesh of static sizes}}
func.func @mesh_dynamic() attributes {moe.mesh = @open} {
  return
}

// -----

shard.grid @mesh(shape = 2) {moe.axes = ["expert"]}
// expected-error @+1 {{'moe.split' on argument 0: the grid has no axis 'data'}}
func.func @split_unknown_axis(%x: tensor<4x4xf32> {moe.split = [["data"], []]}) attributes {moe.mesh = @mesh} {
  return
}

// -----

// expected-error @+1 {{'moe.split' on argument 0 must list, for each dimension of its ranked tensor, the mesh axes splitting it}}
func.func @split_rank(%x: tensor<4x4xf32> {moe.split = [[]]}) {
  return
}

// -----

// expected-error @+1 {{'moe.split' on result 0 splits over axis 'expert' twice}}
func.func @split_twice(%x: tensor<4x4xf32>) -> (tensor<4x4xf32> {moe.split = [["expert"], ["expert"]]}) {
  return %x : tensor<4x4xf32>
}
