// The committed references must match what ODS generates; after changing a
// .td file run `ninja -C build moe-update-docs` and commit docs/reference/.
// RUN: diff -u %moe_src_root/docs/reference/moe-dialect.md %moe_obj_root/docs/moe-dialect.md
// RUN: diff -u %moe_src_root/docs/reference/moe-passes.md %moe_obj_root/docs/moe-passes.md
// RUN: diff -u %moe_src_root/docs/reference/moe-codegen-passes.md %moe_obj_root/docs/moe-codegen-passes.md
// RUN: diff -u %moe_src_root/docs/reference/moe-strategy-passes.md %moe_obj_root/docs/moe-strategy-passes.md
