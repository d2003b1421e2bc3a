/* Plain host code; the build embeds an OffloadBinary into its .llvm.offloading section. */
int host_marker(void) { return 42; }
