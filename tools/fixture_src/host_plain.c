/* A host library without device code. */
int host_only(int x) { return x + 1; }
