/* Empty stand-ins for the HIP runtime / CRT symbols that the HIP host code
   references, so lld-link can produce a self-contained Windows DLL fixture. */
int _fltused = 0;
int atexit(void (*fn)(void)) { (void)fn; return 0; }
void **__hipRegisterFatBinary(void *wrapper) { (void)wrapper; return 0; }
void __hipUnregisterFatBinary(void **handle) { (void)handle; }
void __hipRegisterFunction(void) {}
int __hipPopCallConfiguration(void) { return 0; }
int hipLaunchKernel(void) { return 0; }
