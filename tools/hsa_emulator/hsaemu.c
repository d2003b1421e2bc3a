/* hsaemu: an emulated HSA device for the real HIP runtime (libamdhip64), with no GPU.
 *
 * A stand-in for ROCr (libhsa-runtime64) written from the public HSA interface: the API of
 * hsa.h, hsa_ext_amd.h and hsa_ven_amd_loader.h (ROCm/ROCR-Runtime, runtime/hsa-runtime/inc/),
 * whose enum values are cited below by name. It presents one CPU agent and one GPU agent (the
 * processor named by HSAEMU_DEVICE, from devices.def), memory pools backed by host memory,
 * signals, queues that retire packets without running them, and a loader that maps a code object
 * and answers symbol queries from its ELF and kernel descriptors. Nothing executes on it.
 *
 * Every call is counted. A call or an attribute this file does not model is also counted as
 * "unexpected"; at exit the counts go to the file named by HSAEMU_REPORT as JSON
 * {"device": ..., "unexpected": {...}, "calls": {...}}. HSAEMU_TRACE=1 prints each call on stderr.
 * See README.md next to this file for exactly what is emulated and what is not.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* ---- HSA types and constants (values from hsa.h / hsa_ext_amd.h / hsa_ven_amd_loader.h) ---- */
typedef uint32_t hsa_status_t;
enum {
  HSA_STATUS_SUCCESS = 0x0,
  HSA_STATUS_INFO_BREAK = 0x1,
  HSA_STATUS_ERROR = 0x1000,
  HSA_STATUS_ERROR_INVALID_ARGUMENT = 0x1001,
  HSA_STATUS_ERROR_INVALID_ALLOCATION = 0x1003,
  HSA_STATUS_ERROR_INVALID_AGENT = 0x1004,
  HSA_STATUS_ERROR_OUT_OF_RESOURCES = 0x1008,
  HSA_STATUS_ERROR_NOT_INITIALIZED = 0x100B,
  HSA_STATUS_ERROR_INVALID_ISA = 0x100F,
  HSA_STATUS_ERROR_INVALID_CODE_OBJECT = 0x1010,
  HSA_STATUS_ERROR_INVALID_EXECUTABLE = 0x1011,
  HSA_STATUS_ERROR_FROZEN_EXECUTABLE = 0x1012,
  HSA_STATUS_ERROR_INVALID_SYMBOL_NAME = 0x1013,
  HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL = 0x1019,
  HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER = 0x1021,
};
typedef struct { uint64_t handle; } hsa_agent_t;
typedef struct { uint64_t handle; } hsa_isa_t;
typedef struct { uint64_t handle; } hsa_signal_t;
typedef struct { uint64_t handle; } hsa_amd_memory_pool_t;
typedef struct { uint64_t handle; } hsa_code_object_reader_t;
typedef struct { uint64_t handle; } hsa_executable_t;
typedef struct { uint64_t handle; } hsa_executable_symbol_t;
typedef struct { uint64_t handle; } hsa_loaded_code_object_t;
typedef int64_t hsa_signal_value_t;
/* hsa_queue_t (hsa.h, HSA_LARGE_MODEL layout): type, features, base_address, doorbell_signal,
 * size, reserved1, id. */
typedef struct {
  uint32_t type;
  uint32_t features;
  void *base_address;
  hsa_signal_t doorbell_signal;
  uint32_t size;
  uint32_t reserved1;
  uint64_t id;
} hsa_queue_t;

/* hsa_system_info_t */
enum { SYS_VERSION_MAJOR = 0, SYS_VERSION_MINOR = 1, SYS_TIMESTAMP = 2, SYS_TIMESTAMP_FREQUENCY = 3,
       SYS_SIGNAL_MAX_WAIT = 4, SYS_ENDIANNESS = 5, SYS_MACHINE_MODEL = 6, SYS_EXTENSIONS = 7,
       SYS_AMD_BUILD_VERSION = 0x200, SYS_AMD_SVM_SUPPORTED = 0x201, SYS_AMD_SVM_ACCESSIBLE_BY_DEFAULT = 0x202,
       SYS_AMD_MWAITX_ENABLED = 0x203, SYS_AMD_DMABUF_SUPPORTED = 0x204, SYS_AMD_VIRTUAL_MEM_API_SUPPORTED = 0x205,
       SYS_AMD_XNACK_ENABLED = 0x206, SYS_AMD_EXT_VERSION_MAJOR = 0x207, SYS_AMD_EXT_VERSION_MINOR = 0x208 };
/* hsa_extension_t */
enum { EXT_IMAGES = 1, EXT_AMD_PROFILER = 0x200, EXT_AMD_LOADER = 0x201 };
/* hsa_agent_info_t and hsa_amd_agent_info_t */
enum {
  AI_NAME = 0, AI_VENDOR_NAME = 1, AI_FEATURE = 2, AI_MACHINE_MODEL = 3, AI_PROFILE = 4,
  AI_DEFAULT_FLOAT_ROUNDING_MODE = 5, AI_WAVEFRONT_SIZE = 6, AI_WORKGROUP_MAX_DIM = 7,
  AI_WORKGROUP_MAX_SIZE = 8, AI_GRID_MAX_DIM = 9, AI_GRID_MAX_SIZE = 10, AI_FBARRIER_MAX_SIZE = 11,
  AI_QUEUES_MAX = 12, AI_QUEUE_MIN_SIZE = 13, AI_QUEUE_MAX_SIZE = 14, AI_QUEUE_TYPE = 15, AI_NODE = 16,
  AI_DEVICE = 17, AI_CACHE_SIZE = 18, AI_ISA = 19, AI_EXTENSIONS = 20, AI_VERSION_MAJOR = 21,
  AI_VERSION_MINOR = 22, AI_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES = 23, AI_FAST_F16_OPERATION = 24,
  AMD_AI_CHIP_ID = 0xA000, AMD_AI_CACHELINE_SIZE = 0xA001, AMD_AI_COMPUTE_UNIT_COUNT = 0xA002,
  AMD_AI_MAX_CLOCK_FREQUENCY = 0xA003, AMD_AI_DRIVER_NODE_ID = 0xA004, AMD_AI_MAX_ADDRESS_WATCH_POINTS = 0xA005,
  AMD_AI_BDFID = 0xA006, AMD_AI_MEMORY_WIDTH = 0xA007, AMD_AI_MEMORY_MAX_FREQUENCY = 0xA008,
  AMD_AI_PRODUCT_NAME = 0xA009, AMD_AI_MAX_WAVES_PER_CU = 0xA00A, AMD_AI_NUM_SIMDS_PER_CU = 0xA00B,
  AMD_AI_NUM_SHADER_ENGINES = 0xA00C, AMD_AI_NUM_SHADER_ARRAYS_PER_SE = 0xA00D, AMD_AI_HDP_FLUSH = 0xA00E,
  AMD_AI_DOMAIN = 0xA00F, AMD_AI_COOPERATIVE_QUEUES = 0xA010, AMD_AI_UUID = 0xA011,
  AMD_AI_ASIC_REVISION = 0xA012, AMD_AI_SVM_DIRECT_HOST_ACCESS = 0xA013,
  AMD_AI_COOPERATIVE_COMPUTE_UNIT_COUNT = 0xA014, AMD_AI_MEMORY_AVAIL = 0xA015,
  AMD_AI_TIMESTAMP_FREQUENCY = 0xA016, AMD_AI_ASIC_FAMILY_ID = 0xA107, AMD_AI_UCODE_VERSION = 0xA108,
  AMD_AI_SDMA_UCODE_VERSION = 0xA109, AMD_AI_NUM_SDMA_ENG = 0xA10A, AMD_AI_NUM_SDMA_XGMI_ENG = 0xA10B,
  AMD_AI_IOMMU_SUPPORT = 0xA110, AMD_AI_NUM_XCC = 0xA111, AMD_AI_DRIVER_UID = 0xA112,
  AMD_AI_NEAREST_CPU = 0xA113, AMD_AI_MEMORY_PROPERTIES = 0xA114, AMD_AI_SCRATCH_LIMIT_MAX = 0xA116,
  AMD_AI_SCRATCH_LIMIT_CURRENT = 0xA117, AMD_AI_PM4_EMULATION = 0xA119, AMD_AI_LUID = 0xA11A, AMD_AI_HAS_EXPERT_SCHED_MODE = 0xA11B,
  AMD_AI_CUID = 0xA11C,
};
/* hsa_isa_info_t */
enum { ISA_NAME_LENGTH = 0, ISA_NAME = 1, ISA_MACHINE_MODELS = 5, ISA_PROFILES = 6,
       ISA_DEFAULT_FLOAT_ROUNDING_MODES = 7, ISA_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES = 8,
       ISA_FAST_F16_OPERATION = 9, ISA_WORKGROUP_MAX_DIM = 12, ISA_WORKGROUP_MAX_SIZE = 13,
       ISA_GRID_MAX_DIM = 14, ISA_GRID_MAX_SIZE = 16, ISA_FBARRIER_MAX_SIZE = 17 };
/* hsa_amd_memory_pool_info_t, hsa_amd_segment_t, global flags, location, access */
enum { MP_SEGMENT = 0, MP_GLOBAL_FLAGS = 1, MP_SIZE = 2, MP_RUNTIME_ALLOC_ALLOWED = 5,
       MP_RUNTIME_ALLOC_GRANULE = 6, MP_RUNTIME_ALLOC_ALIGNMENT = 7, MP_ACCESSIBLE_BY_ALL = 15,
       MP_ALLOC_MAX_SIZE = 16, MP_LOCATION = 17, MP_RUNTIME_ALLOC_REC_GRANULE = 18 };
enum { SEG_GLOBAL = 0, SEG_READONLY = 1, SEG_PRIVATE = 2, SEG_GROUP = 3 };
enum { FLAG_KERNARG_INIT = 1, FLAG_FINE_GRAINED = 2, FLAG_COARSE_GRAINED = 4 };
enum { LOC_CPU = 0, LOC_GPU = 1 };
enum { AMP_ACCESS = 0, AMP_NUM_LINK_HOPS = 1, AMP_LINK_INFO = 2 };
enum { ACCESS_NEVER_ALLOWED = 0, ACCESS_ALLOWED_BY_DEFAULT = 1, ACCESS_DISALLOWED_BY_DEFAULT = 2 };
/* hsa_executable_symbol_info_t */
enum { SYM_TYPE = 0, SYM_NAME_LENGTH = 1, SYM_NAME = 2, SYM_MODULE_NAME_LENGTH = 3, SYM_MODULE_NAME = 4,
       SYM_LINKAGE = 5, SYM_VARIABLE_ALLOCATION = 6, SYM_VARIABLE_SEGMENT = 7, SYM_VARIABLE_ALIGNMENT = 8,
       SYM_VARIABLE_SIZE = 9, SYM_VARIABLE_IS_CONST = 10, SYM_KERNEL_KERNARG_SEGMENT_SIZE = 11,
       SYM_KERNEL_KERNARG_SEGMENT_ALIGNMENT = 12, SYM_KERNEL_GROUP_SEGMENT_SIZE = 13,
       SYM_KERNEL_PRIVATE_SEGMENT_SIZE = 14, SYM_KERNEL_DYNAMIC_CALLSTACK = 15, SYM_IS_DEFINITION = 17,
       SYM_KERNEL_CALL_CONVENTION = 18, SYM_AGENT = 20, SYM_VARIABLE_ADDRESS = 21, SYM_KERNEL_OBJECT = 22 };
enum { SYMBOL_KIND_VARIABLE = 0, SYMBOL_KIND_KERNEL = 1 };
/* hsa_ven_amd_loader_loaded_code_object_info_t */
enum { LCO_EXECUTABLE = 1, LCO_KIND = 2, LCO_AGENT = 3, LCO_STORAGE_TYPE = 4, LCO_MEMORY_BASE = 5,
       LCO_MEMORY_SIZE = 6, LCO_STORAGE_FILE = 7, LCO_LOAD_DELTA = 8, LCO_LOAD_BASE = 9, LCO_LOAD_SIZE = 10,
       LCO_URI_LENGTH = 11, LCO_URI = 12 };
enum { PACKET_TYPE_INVALID = 1 };  /* hsa_packet_type_t */

/* ---- the device table ---- */
typedef struct {
  const char *processor, *isa, *product;
  uint32_t cu, simd, waves, wave, lds, se, sa, chip, mhz, l1, l2, line, xcc;
} device_t;
#define HSAEMU_DEV(p, i, n, cu, simd, waves, wave, lds, se, sa, chip, mhz, l1, l2, line, xcc) \
  {p, i, n, cu, simd, waves, wave, lds, se, sa, chip, mhz, l1, l2, line, xcc},
static const device_t DEVICES[] = {
#include "devices.def"
};
#undef HSAEMU_DEV
#define NDEVICES (sizeof DEVICES / sizeof DEVICES[0])

/* ---- call counting ---- */
#define MAXKEYS 512
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static struct counter { char key[64]; uint64_t n; } calls[MAXKEYS], unexpected[MAXKEYS];
static int ncalls, nunexpected;
static int trace = -1;

static void bump(struct counter *tab, int *n, const char *key) {
  pthread_mutex_lock(&count_lock);
  for (int i = 0; i < *n; i++)
    if (strcmp(tab[i].key, key) == 0) { tab[i].n++; pthread_mutex_unlock(&count_lock); return; }
  if (*n < MAXKEYS) { snprintf(tab[*n].key, sizeof tab[*n].key, "%s", key); tab[*n].n = 1; (*n)++; }
  pthread_mutex_unlock(&count_lock);
}
static void called(const char *fn) {
  if (trace < 0) trace = getenv("HSAEMU_TRACE") && strcmp(getenv("HSAEMU_TRACE"), "1") == 0;
  if (trace) fprintf(stderr, "hsaemu: %s\n", fn);
  bump(calls, &ncalls, fn);
}
static hsa_status_t unmodeled(const char *what, ...) {
  char key[64];
  va_list ap;
  va_start(ap, what);
  vsnprintf(key, sizeof key, what, ap);
  va_end(ap);
  if (trace > 0) fprintf(stderr, "hsaemu: UNEXPECTED %s\n", key);
  bump(unexpected, &nunexpected, key);
  return HSA_STATUS_ERROR;
}

/* Attributes refused on purpose (HSA_STATUS_ERROR_INVALID_ARGUMENT, what ROCr answers for an
 * attribute it does not provide), each counted under "refused" in the report, not "unexpected":
 *  - agent HSA_AMD_AGENT_INFO_LUID (0xA11A): "only valid on Windows" (hsa_ext_amd.h);
 *  - agent 0xA121 (HIP 7.14 logs it as HSA_AMD_AGENT_INFO_CLUSTER_MAX_SIZE), agent 0xA123,
 *    system 0x209 (logged as HSA_AMD_SYSTEM_INFO_FABRIC_HANDLES_SUPPORTED) and queue 0x4, 0x5,
 *    0x8 (hsa_amd_queue_get_info, asked when a stream's queue is made): newer than every public
 *    hsa.h / hsa_ext_amd.h read for this emulator (the newest ends at HSA_AMD_AGENT_INFO_CUID =
 *    0xA11C, HSA_AMD_SYSTEM_INFO_EXT_VERSION_MINOR = 0x208 and HSA_AMD_QUEUE_INFO_DOORBELL_ID = 1),
 *    so their types are unknown here. HIP 7.14 asks for them, logs the refusal where it logs
 *    anything, and carries on without the feature. */
static const char *const REFUSED[] = {
  "agent_info:0xa11a", "agent_info:0xa121", "agent_info:0xa123", "cpu_agent_info:0xa11a",
  "cpu_agent_info:0xa121", "cpu_agent_info:0xa123", "system_info:0x209",
  "queue_info:0x4", "queue_info:0x5", "queue_info:0x8",
};
static struct counter refused[MAXKEYS];
static int nrefused;
static hsa_status_t refused_or_unmodeled(const char *kind, uint32_t attribute) {
  char key[64];
  snprintf(key, sizeof key, "%s:0x%x", kind, attribute);
  for (size_t i = 0; i < sizeof REFUSED / sizeof REFUSED[0]; i++)
    if (strcmp(key, REFUSED[i]) == 0) {
      bump(refused, &nrefused, key);
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
  return unmodeled("%s", key);
}

static size_t json_counts(char *out, size_t cap, const struct counter *tab, int n) {
  size_t len = 0;
  len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "{");
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "%s\"%s\": %llu", i ? ", " : "",
                            tab[i].key, (unsigned long long)tab[i].n);
  len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "}");
  return len;
}

static const device_t *gpu;  /* chosen in hsa_init */

/* The counts so far as JSON into buf (NUL-terminated when it fits); returns the length needed.
 * Not an HSA function: the oracle worker reads it through ctypes. */
EXPORT size_t hsaemu_report_json(char *buf, size_t cap) {
  pthread_mutex_lock(&count_lock);
  size_t len = 0;
  char *o = buf;
  len += (size_t)snprintf(o + len, len < cap ? cap - len : 0, "{\"device\": \"%s\", \"unexpected\": ",
                          gpu ? gpu->processor : "");
  len += json_counts(o + len, len < cap ? cap - len : 0, unexpected, nunexpected);
  len += (size_t)snprintf(o + len, len < cap ? cap - len : 0, ", \"refused\": ");
  len += json_counts(o + len, len < cap ? cap - len : 0, refused, nrefused);
  len += (size_t)snprintf(o + len, len < cap ? cap - len : 0, ", \"calls\": ");
  len += json_counts(o + len, len < cap ? cap - len : 0, calls, ncalls);
  len += (size_t)snprintf(o + len, len < cap ? cap - len : 0, "}");
  pthread_mutex_unlock(&count_lock);
  return len;
}

/* The processors this build emulates, comma-separated (for the Python side and the table test). */
EXPORT const char *hsaemu_processors(void) {
  static char buf[512];
  if (!buf[0])
    for (size_t i = 0; i < NDEVICES; i++)
      snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? "," : "", DEVICES[i].processor);
  return buf;
}

/* One row of the table as JSON (index i), or NULL past the end. */
EXPORT const char *hsaemu_device_json(size_t i) {
  static char buf[1024];
  if (i >= NDEVICES) return NULL;
  const device_t *d = &DEVICES[i];
  snprintf(buf, sizeof buf,
           "{\"processor\": \"%s\", \"isa\": \"%s\", \"product\": \"%s\", \"compute_units\": %u, "
           "\"simds_per_cu\": %u, \"max_waves_per_cu\": %u, \"wavefront_size\": %u, \"lds\": %u, "
           "\"shader_engines\": %u, \"shader_arrays_per_se\": %u, \"chip_id\": %u, \"max_clock_mhz\": %u, "
           "\"l1_kib\": %u, \"l2_kib\": %u, \"cacheline\": %u, \"num_xcc\": %u}",
           d->processor, d->isa, d->product, d->cu, d->simd, d->waves, d->wave, d->lds, d->se, d->sa, d->chip,
           d->mhz, d->l1, d->l2, d->line, d->xcc);
  return buf;
}

static void write_report(void) {
  const char *path = getenv("HSAEMU_REPORT");
  if (!path || !*path) return;
  size_t need = hsaemu_report_json(NULL, 0) + 1;
  char *buf = malloc(need);
  if (!buf) return;
  hsaemu_report_json(buf, need);
  FILE *f = fopen(path, "w");
  if (f) { fputs(buf, f); fputc('\n', f); fclose(f); }
  free(buf);
}
__attribute__((destructor)) static void at_unload(void) { write_report(); }

/* ---- agents, ISAs, pools ---- */
typedef struct { int is_gpu; } agent_t;
static agent_t cpu_agent = {0}, gpu_agent = {1};
typedef struct { int id; } isa_t;
static isa_t gpu_isa = {1};
typedef struct { agent_t *owner; uint32_t segment, flags, location; int alloc; } pool_t;
static pool_t pools[] = {
  /* the host's system memory: fine-grained with kernarg, and coarse-grained (as rocminfo shows
   * for every CPU agent) */
  {&cpu_agent, SEG_GLOBAL, FLAG_FINE_GRAINED | FLAG_KERNARG_INIT, LOC_CPU, 1},
  {&cpu_agent, SEG_GLOBAL, FLAG_COARSE_GRAINED, LOC_CPU, 1},
  /* the GPU's: coarse-grained "VRAM", fine-grained, and the GROUP segment (LDS), not allocatable */
  {&gpu_agent, SEG_GLOBAL, FLAG_COARSE_GRAINED, LOC_GPU, 1},
  {&gpu_agent, SEG_GLOBAL, FLAG_FINE_GRAINED, LOC_GPU, 1},
  {&gpu_agent, SEG_GROUP, 0, LOC_GPU, 0},
};
#define NPOOLS (sizeof pools / sizeof pools[0])
/* Sizes the pools report. Allocations are served from host memory on demand; these are upper
 * bounds the runtime sees, not reservations. 64 GiB "VRAM" and host memory as sysconf says. */
static const uint64_t GPU_MEMORY = 64ull << 30;
static uint64_t host_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 16ull << 30;
}

static int initialised;
static int valid_agent(hsa_agent_t a) {
  return a.handle == (uint64_t)(uintptr_t)&cpu_agent || a.handle == (uint64_t)(uintptr_t)&gpu_agent;
}

EXPORT hsa_status_t hsa_init(void) {
  called("hsa_init");
  if (!gpu) {
    const char *want = getenv("HSAEMU_DEVICE");
    if (!want || !*want) want = "gfx942";
    for (size_t i = 0; i < NDEVICES; i++)
      if (strcmp(DEVICES[i].processor, want) == 0) gpu = &DEVICES[i];
    if (!gpu) {
      fprintf(stderr, "hsaemu: HSAEMU_DEVICE=%s is not emulated; valid: %s\n", want, hsaemu_processors());
      return HSA_STATUS_ERROR;
    }
  }
  initialised++;
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_shut_down(void) {
  called("hsa_shut_down");
  if (initialised > 0) initialised--;
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_status_string(hsa_status_t status, const char **str) {
  called("hsa_status_string");
  static char buf[64];
  snprintf(buf, sizeof buf, "HSA status 0x%x (hsaemu)", status);
  *str = buf;
  return HSA_STATUS_SUCCESS;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

EXPORT hsa_status_t hsa_system_get_info(uint32_t attribute, void *value) {
  called("hsa_system_get_info");
  switch (attribute) {
  case SYS_VERSION_MAJOR: *(uint16_t *)value = 1; return 0;
  case SYS_VERSION_MINOR: *(uint16_t *)value = 1; return 0;
  case SYS_TIMESTAMP: *(uint64_t *)value = now_ns(); return 0;
  case SYS_TIMESTAMP_FREQUENCY: *(uint64_t *)value = 1000000000ull; return 0;
  case SYS_SIGNAL_MAX_WAIT: *(uint64_t *)value = UINT64_MAX; return 0;
  case SYS_ENDIANNESS: *(uint32_t *)value = 0; return 0;        /* HSA_ENDIANNESS_LITTLE */
  case SYS_MACHINE_MODEL: *(uint32_t *)value = 1; return 0;     /* HSA_MACHINE_MODEL_LARGE */
  case SYS_EXTENSIONS: {                                        /* uint8_t[128] bit mask */
    uint8_t *mask = value;
    memset(mask, 0, 128);
    mask[EXT_AMD_LOADER / 8] |= (uint8_t)(1u << (EXT_AMD_LOADER % 8));
    return 0;
  }
  case SYS_AMD_BUILD_VERSION: *(const char **)value = "hsaemu"; return 0;
  case SYS_AMD_SVM_SUPPORTED: case SYS_AMD_SVM_ACCESSIBLE_BY_DEFAULT: case SYS_AMD_MWAITX_ENABLED:
  case SYS_AMD_DMABUF_SUPPORTED: case SYS_AMD_VIRTUAL_MEM_API_SUPPORTED: case SYS_AMD_XNACK_ENABLED:
    *(bool *)value = false; return 0;
  case SYS_AMD_EXT_VERSION_MAJOR: *(uint16_t *)value = 1; return 0;
  case SYS_AMD_EXT_VERSION_MINOR: *(uint16_t *)value = 0; return 0;
  }
  return refused_or_unmodeled("system_info", attribute);
}

EXPORT hsa_status_t hsa_iterate_agents(hsa_status_t (*cb)(hsa_agent_t, void *), void *data) {
  called("hsa_iterate_agents");
  if (!initialised) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  hsa_agent_t a = {(uint64_t)(uintptr_t)&cpu_agent};
  hsa_status_t s = cb(a, data);
  if (s != HSA_STATUS_SUCCESS) return s == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : s;
  a.handle = (uint64_t)(uintptr_t)&gpu_agent;
  s = cb(a, data);
  return s == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : s;
}

static void put_name(void *value, const char *s, size_t cap) {
  size_t n = strnlen(s, cap - 1);
  memset(value, 0, cap);
  memcpy(value, s, n);
}

static hsa_status_t cpu_info(uint32_t attribute, void *value) {
  switch (attribute) {
  case AI_NAME: put_name(value, "hsaemu host CPU", 64); return 0;
  case AI_VENDOR_NAME: put_name(value, "CPU", 64); return 0;
  case AI_FEATURE: *(uint32_t *)value = 0; return 0;
  case AI_MACHINE_MODEL: *(uint32_t *)value = 1; return 0;
  case AI_PROFILE: *(uint32_t *)value = 1; return 0;            /* HSA_PROFILE_FULL */
  case AI_DEFAULT_FLOAT_ROUNDING_MODE: *(uint32_t *)value = 2; return 0;  /* NEAR */
  case AI_QUEUES_MAX: case AI_QUEUE_MIN_SIZE: case AI_QUEUE_MAX_SIZE: *(uint32_t *)value = 0; return 0;
  case AI_NODE: *(uint32_t *)value = 0; return 0;
  case AI_DEVICE: *(uint32_t *)value = 0; return 0;             /* HSA_DEVICE_TYPE_CPU */
  case AMD_AI_COMPUTE_UNIT_COUNT: *(uint32_t *)value = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN); return 0;
  case AMD_AI_DRIVER_NODE_ID: *(uint32_t *)value = 0; return 0;
  case AMD_AI_CHIP_ID: *(uint32_t *)value = 0; return 0;
  case AMD_AI_PRODUCT_NAME: put_name(value, "hsaemu host CPU", 64); return 0;
  case AMD_AI_NUM_XCC: *(uint32_t *)value = 1; return 0;
  case AMD_AI_MEMORY_PROPERTIES: memset(value, 0, 8); return 0;
  case AMD_AI_DOMAIN: *(uint32_t *)value = 0; return 0;
  case AMD_AI_BDFID: *(uint32_t *)value = 0; return 0;
  case AMD_AI_CUID: memset(value, 0, 16); return 0;
  }
  return refused_or_unmodeled("cpu_agent_info", attribute);
}

static hsa_status_t gpu_info(uint32_t attribute, void *value) {
  const device_t *d = gpu;
  switch (attribute) {
  case AI_NAME: put_name(value, d->processor, 64); return 0;
  case AI_VENDOR_NAME: put_name(value, "AMD", 64); return 0;
  case AI_FEATURE: *(uint32_t *)value = 1; return 0;            /* HSA_AGENT_FEATURE_KERNEL_DISPATCH */
  case AI_MACHINE_MODEL: *(uint32_t *)value = 1; return 0;      /* LARGE */
  case AI_PROFILE: *(uint32_t *)value = 0; return 0;            /* BASE_PROFILE (rocminfo) */
  case AI_DEFAULT_FLOAT_ROUNDING_MODE: *(uint32_t *)value = 2; return 0;  /* NEAR (rocminfo) */
  case AI_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: *(uint32_t *)value = 2; return 0;
  case AI_FAST_F16_OPERATION: *(bool *)value = true; return 0;  /* rocminfo "Fast F16 Operation: TRUE" */
  case AI_WAVEFRONT_SIZE: *(uint32_t *)value = d->wave; return 0;
  /* rocminfo on every GPU agent in the sources of devices.def: Workgroup Max Size 1024 (per
   * dimension 1024), Grid Max Size 0xffffffff, fbarriers 32, 128 queues of 64..131072 packets */
  case AI_WORKGROUP_MAX_DIM: { uint16_t *v = value; v[0] = v[1] = v[2] = 1024; return 0; }
  case AI_WORKGROUP_MAX_SIZE: *(uint32_t *)value = 1024; return 0;
  case AI_GRID_MAX_DIM: { uint32_t *v = value; v[0] = v[1] = v[2] = 0xffffffffu; return 0; }
  case AI_GRID_MAX_SIZE: *(uint32_t *)value = 0xffffffffu; return 0;
  case AI_FBARRIER_MAX_SIZE: *(uint32_t *)value = 32; return 0;
  case AI_QUEUES_MAX: *(uint32_t *)value = 128; return 0;
  case AI_QUEUE_MIN_SIZE: *(uint32_t *)value = 64; return 0;
  case AI_QUEUE_MAX_SIZE: *(uint32_t *)value = 131072; return 0;
  case AI_QUEUE_TYPE: *(uint32_t *)value = 0; return 0;         /* MULTI */
  case AI_NODE: *(uint32_t *)value = 1; return 0;
  case AI_DEVICE: *(uint32_t *)value = 1; return 0;             /* HSA_DEVICE_TYPE_GPU */
  case AI_CACHE_SIZE: { uint32_t *v = value; v[0] = d->l1 * 1024; v[1] = d->l2 * 1024; v[2] = v[3] = 0; return 0; }
  case AI_ISA: ((hsa_isa_t *)value)->handle = (uint64_t)(uintptr_t)&gpu_isa; return 0;
  case AI_EXTENSIONS: memset(value, 0, 128); ((uint8_t *)value)[EXT_AMD_LOADER / 8] |= 1u << (EXT_AMD_LOADER % 8); return 0;
  case AI_VERSION_MAJOR: *(uint16_t *)value = 1; return 0;
  case AI_VERSION_MINOR: *(uint16_t *)value = 1; return 0;
  case AMD_AI_CHIP_ID: *(uint32_t *)value = d->chip; return 0;
  case AMD_AI_CACHELINE_SIZE: *(uint32_t *)value = d->line; return 0;
  case AMD_AI_COMPUTE_UNIT_COUNT: *(uint32_t *)value = d->cu; return 0;
  case AMD_AI_COOPERATIVE_COMPUTE_UNIT_COUNT: *(uint32_t *)value = d->cu; return 0;
  case AMD_AI_MAX_CLOCK_FREQUENCY: *(uint32_t *)value = d->mhz; return 0;
  case AMD_AI_DRIVER_NODE_ID: *(uint32_t *)value = 1; return 0;
  case AMD_AI_MAX_ADDRESS_WATCH_POINTS: *(uint32_t *)value = 4; return 0;  /* rocminfo "WatchPts on Addr. Ranges:4" */
  case AMD_AI_BDFID: *(uint32_t *)value = 0x100; return 0;     /* an invented PCI address: bus 1 */
  case AMD_AI_PRODUCT_NAME: {  /* the marketing name, marked: what HIP reports as the device's name
                                (and amdocc verify --record writes as its source) says it is emulated */
    char name[64];
    snprintf(name, sizeof name, "%s [hsaemu]", d->product);
    put_name(value, name, 64);
    return 0;
  }
  case AMD_AI_MAX_WAVES_PER_CU: *(uint32_t *)value = d->waves; return 0;
  case AMD_AI_NUM_SIMDS_PER_CU: *(uint32_t *)value = d->simd; return 0;
  case AMD_AI_NUM_SHADER_ENGINES: *(uint32_t *)value = d->se; return 0;
  case AMD_AI_NUM_SHADER_ARRAYS_PER_SE: *(uint32_t *)value = d->sa; return 0;
  case AMD_AI_NUM_XCC: *(uint32_t *)value = d->xcc; return 0;
  case AMD_AI_DOMAIN: *(uint32_t *)value = 0; return 0;
  case AMD_AI_COOPERATIVE_QUEUES: *(bool *)value = false; return 0;
  case AMD_AI_UUID: put_name(value, "GPU-hsaemu00000000", 21); return 0;
  case AMD_AI_ASIC_REVISION: *(uint32_t *)value = 0; return 0;
  case AMD_AI_SVM_DIRECT_HOST_ACCESS: *(bool *)value = false; return 0;
  case AMD_AI_MEMORY_AVAIL: *(uint64_t *)value = GPU_MEMORY; return 0;
  case AMD_AI_TIMESTAMP_FREQUENCY: *(uint64_t *)value = 100000000ull; return 0;
  case AMD_AI_MEMORY_PROPERTIES: memset(value, 0, 8); return 0;  /* not an APU */
  case AMD_AI_IOMMU_SUPPORT: *(uint32_t *)value = 0; return 0;   /* none */
  case AMD_AI_NUM_SDMA_ENG: *(uint32_t *)value = 0; return 0;    /* copies are done by the host */
  case AMD_AI_NUM_SDMA_XGMI_ENG: *(uint32_t *)value = 0; return 0;
  case AMD_AI_HDP_FLUSH: {  /* hsa_amd_hdp_flush_t: two register addresses; here two host words */
    static uint32_t mem_flush, reg_flush;
    uint32_t **v = value; v[0] = &mem_flush; v[1] = &reg_flush; return 0; }
  case AMD_AI_NEAREST_CPU: ((hsa_agent_t *)value)->handle = (uint64_t)(uintptr_t)&cpu_agent; return 0;
  /* Memory bus width and clock are not emulated (0: unknown); HIP only copies them into
   * hipDeviceProp_t.memoryBusWidth / memoryClockRate. */
  case AMD_AI_MEMORY_WIDTH: case AMD_AI_MEMORY_MAX_FREQUENCY: *(uint32_t *)value = 0; return 0;
  case AMD_AI_SCRATCH_LIMIT_MAX: case AMD_AI_SCRATCH_LIMIT_CURRENT: *(uint64_t *)value = 0; return 0;
  case AMD_AI_CUID: memset(value, 0, 16); return 0;            /* no secondary unique id */
  case AMD_AI_PM4_EMULATION: case AMD_AI_HAS_EXPERT_SCHED_MODE: *(bool *)value = false; return 0;
  }
  return refused_or_unmodeled("agent_info", attribute);
}

EXPORT hsa_status_t hsa_agent_get_info(hsa_agent_t agent, uint32_t attribute, void *value) {
  called("hsa_agent_get_info");
  if (!valid_agent(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  return ((agent_t *)(uintptr_t)agent.handle)->is_gpu ? gpu_info(attribute, value) : cpu_info(attribute, value);
}

EXPORT hsa_status_t hsa_agent_iterate_isas(hsa_agent_t agent, hsa_status_t (*cb)(hsa_isa_t, void *), void *data) {
  called("hsa_agent_iterate_isas");
  if (!valid_agent(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!((agent_t *)(uintptr_t)agent.handle)->is_gpu) return HSA_STATUS_SUCCESS;  /* a CPU has none */
  hsa_isa_t isa = {(uint64_t)(uintptr_t)&gpu_isa};
  hsa_status_t s = cb(isa, data);
  return s == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : s;
}

EXPORT hsa_status_t hsa_isa_get_info_alt(hsa_isa_t isa, uint32_t attribute, void *value) {
  called("hsa_isa_get_info_alt");
  if (isa.handle != (uint64_t)(uintptr_t)&gpu_isa) return HSA_STATUS_ERROR_INVALID_ISA;
  switch (attribute) {
  case ISA_NAME_LENGTH: *(uint32_t *)value = (uint32_t)strlen(gpu->isa); return 0;  /* without the NUL */
  case ISA_NAME: memcpy(value, gpu->isa, strlen(gpu->isa)); return 0;
  case ISA_MACHINE_MODELS: { bool *v = value; v[0] = false; v[1] = true; return 0; }
  case ISA_PROFILES: { bool *v = value; v[0] = true; v[1] = false; return 0; }
  case ISA_DEFAULT_FLOAT_ROUNDING_MODES: case ISA_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: {
    bool *v = value; v[0] = false; v[1] = false; v[2] = true; return 0; }
  case ISA_FAST_F16_OPERATION: *(bool *)value = true; return 0;
  case ISA_WORKGROUP_MAX_DIM: { uint16_t *v = value; v[0] = v[1] = v[2] = 1024; return 0; }
  case ISA_WORKGROUP_MAX_SIZE: *(uint32_t *)value = 1024; return 0;
  case ISA_GRID_MAX_DIM: { uint32_t *v = value; v[0] = v[1] = v[2] = 0xffffffffu; return 0; }
  case ISA_GRID_MAX_SIZE: *(uint64_t *)value = 0xffffffffull; return 0;
  case ISA_FBARRIER_MAX_SIZE: *(uint32_t *)value = 32; return 0;
  }
  return unmodeled("isa_info:0x%x", attribute);
}

EXPORT hsa_status_t hsa_amd_agent_iterate_memory_pools(hsa_agent_t agent,
                                                       hsa_status_t (*cb)(hsa_amd_memory_pool_t, void *), void *data) {
  called("hsa_amd_agent_iterate_memory_pools");
  if (!valid_agent(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  for (size_t i = 0; i < NPOOLS; i++) {
    if ((uint64_t)(uintptr_t)pools[i].owner != agent.handle) continue;
    hsa_amd_memory_pool_t p = {(uint64_t)(uintptr_t)&pools[i]};
    hsa_status_t s = cb(p, data);
    if (s == HSA_STATUS_INFO_BREAK) return HSA_STATUS_SUCCESS;
    if (s != HSA_STATUS_SUCCESS) return s;
  }
  return HSA_STATUS_SUCCESS;
}

static pool_t *as_pool(hsa_amd_memory_pool_t p) {
  for (size_t i = 0; i < NPOOLS; i++)
    if (p.handle == (uint64_t)(uintptr_t)&pools[i]) return &pools[i];
  return NULL;
}

static uint64_t pool_size(const pool_t *p) {
  if (p->segment == SEG_GROUP) return gpu->lds;
  return p->location == LOC_GPU ? GPU_MEMORY : host_memory();
}

EXPORT hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t pool, uint32_t attribute, void *value) {
  called("hsa_amd_memory_pool_get_info");
  pool_t *p = as_pool(pool);
  if (!p) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (attribute) {
  case MP_SEGMENT: *(uint32_t *)value = p->segment; return 0;
  case MP_GLOBAL_FLAGS: *(uint32_t *)value = p->flags; return 0;
  case MP_SIZE: *(size_t *)value = (size_t)pool_size(p); return 0;
  case MP_RUNTIME_ALLOC_ALLOWED: *(bool *)value = p->alloc; return 0;
  case MP_RUNTIME_ALLOC_GRANULE: case MP_RUNTIME_ALLOC_ALIGNMENT:  /* rocminfo: 4KB, 0KB for GROUP */
    *(size_t *)value = p->alloc ? 4096 : 0; return 0;
  case MP_RUNTIME_ALLOC_REC_GRANULE: *(size_t *)value = p->alloc ? (p->location == LOC_GPU ? 2u << 20 : 4096) : 0; return 0;
  case MP_ACCESSIBLE_BY_ALL: *(bool *)value = p->location == LOC_CPU; return 0;
  case MP_ALLOC_MAX_SIZE: *(size_t *)value = p->alloc ? (size_t)pool_size(p) : 0; return 0;
  case MP_LOCATION: *(uint32_t *)value = p->location; return 0;
  }
  return unmodeled("memory_pool_info:0x%x", attribute);
}

EXPORT hsa_status_t hsa_amd_agent_memory_pool_get_info(hsa_agent_t agent, hsa_amd_memory_pool_t pool,
                                                       uint32_t attribute, void *value) {
  called("hsa_amd_agent_memory_pool_get_info");
  pool_t *p = as_pool(pool);
  if (!p || !valid_agent(agent)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  int own = (uint64_t)(uintptr_t)p->owner == agent.handle;
  switch (attribute) {
  case AMP_ACCESS:
    if (p->segment == SEG_GROUP) *(uint32_t *)value = own ? ACCESS_ALLOWED_BY_DEFAULT : ACCESS_NEVER_ALLOWED;
    else if (own || p->location == LOC_CPU) *(uint32_t *)value = ACCESS_ALLOWED_BY_DEFAULT;
    else *(uint32_t *)value = ACCESS_DISALLOWED_BY_DEFAULT;
    return 0;
  case AMP_NUM_LINK_HOPS: *(uint32_t *)value = own ? 0 : 1; return 0;
  case AMP_LINK_INFO:
    /* hsa_amd_memory_pool_link_info_t, one per hop: a PCIe link (the emulated GPU is a card) */
    if (!own) {
      struct { uint32_t min_latency, max_latency, min_bandwidth, max_bandwidth; bool a32, a64, coherent;
               uint32_t link_type, numa_distance; } link = {0, 0, 0, 0, true, true, false, 2 /* PCIE */, 20};
      memcpy(value, &link, sizeof link);
    }
    return 0;
  }
  return unmodeled("agent_memory_pool_info:0x%x", attribute);
}

/* ---- host-backed memory ---- */
EXPORT hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t pool, size_t size, uint32_t flags, void **ptr) {
  (void)flags;
  called("hsa_amd_memory_pool_allocate");
  pool_t *p = as_pool(pool);
  if (!p || !p->alloc || !ptr) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (size == 0) { *ptr = NULL; return HSA_STATUS_ERROR_INVALID_ALLOCATION; }
  size_t rounded = (size + 4095) & ~(size_t)4095;
  void *m = NULL;
  if (posix_memalign(&m, 4096, rounded) != 0) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  memset(m, 0, rounded);
  *ptr = m;
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_amd_memory_pool_free(void *ptr) {
  called("hsa_amd_memory_pool_free");
  free(ptr);
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_amd_agents_allow_access(uint32_t n, const hsa_agent_t *agents, const uint32_t *flags, const void *ptr) {
  (void)n; (void)agents; (void)flags; (void)ptr;
  called("hsa_amd_agents_allow_access");
  return HSA_STATUS_SUCCESS;  /* one address space: every agent sees host memory */
}

EXPORT hsa_status_t hsa_memory_copy(void *dst, const void *src, size_t size) {
  called("hsa_memory_copy");
  memmove(dst, src, size);
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_amd_memory_copy_engine_status(hsa_agent_t dst, hsa_agent_t src, uint32_t *mask) {
  (void)dst; (void)src;
  called("hsa_amd_memory_copy_engine_status");
  *mask = 0;  /* no SDMA engines: the emulated device has none (HSA_AMD_AGENT_INFO_NUM_SDMA_ENG 0) */
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_amd_register_system_event_handler(void *callback, void *data) {
  (void)callback; (void)data;
  called("hsa_amd_register_system_event_handler");
  return HSA_STATUS_SUCCESS;  /* no events ever happen: nothing runs */
}

EXPORT hsa_status_t hsa_amd_memory_async_copy(void *dst, hsa_agent_t dst_agent, const void *src, hsa_agent_t src_agent,
                                              size_t size, uint32_t num_deps, const hsa_signal_t *deps,
                                              hsa_signal_t completion);

/* ---- signals ---- */
typedef struct handler_s {
  uint32_t cond;
  int64_t value;
  bool (*fn)(int64_t, void *);
  void *arg;
  struct handler_s *next;
} handler_t;
typedef struct queue_s queue_t;
typedef struct signal_s {
  volatile int64_t value;
  queue_t *doorbell_of;  /* a queue's doorbell: a store retires its packets */
  handler_t *handlers;
  uint64_t magic;
} signal_t;
#define SIGNAL_MAGIC 0x68736165756d5347ull
static pthread_mutex_t signal_lock = PTHREAD_MUTEX_INITIALIZER;

static signal_t *as_signal(hsa_signal_t s) {
  signal_t *p = (signal_t *)(uintptr_t)s.handle;
  return p && p->magic == SIGNAL_MAGIC ? p : NULL;
}

static int satisfied(uint32_t cond, int64_t v, int64_t cmp) {
  switch (cond) {
  case 0: return v == cmp;  /* HSA_SIGNAL_CONDITION_EQ */
  case 1: return v != cmp;  /* NE */
  case 2: return v < cmp;   /* LT */
  case 3: return v >= cmp;  /* GTE */
  }
  return 0;
}

/* Run the asynchronous handlers whose condition now holds (each once unless it asks to stay). */
static void fire_handlers(signal_t *s) {
  for (;;) {
    handler_t *h = NULL, **link;
    pthread_mutex_lock(&signal_lock);
    for (link = &s->handlers; *link; link = &(*link)->next)
      if (satisfied((*link)->cond, s->value, (*link)->value)) { h = *link; *link = h->next; break; }
    pthread_mutex_unlock(&signal_lock);
    if (!h) return;
    bool keep = h->fn(s->value, h->arg);
    if (keep) {
      /* a handler that stays would fire again at once on an unchanged value: keep it parked */
      pthread_mutex_lock(&signal_lock);
      h->next = NULL;
      link = &s->handlers;
      while (*link) link = &(*link)->next;
      *link = h;
      pthread_mutex_unlock(&signal_lock);
      if (satisfied(h->cond, s->value, h->value)) return;
    } else {
      free(h);
    }
  }
}

static hsa_status_t new_signal(int64_t initial, hsa_signal_t *out) {
  signal_t *s = calloc(1, sizeof *s);
  if (!s) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  s->value = initial;
  s->magic = SIGNAL_MAGIC;
  out->handle = (uint64_t)(uintptr_t)s;
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_signal_create(int64_t initial, uint32_t n, const hsa_agent_t *consumers, hsa_signal_t *out) {
  (void)n; (void)consumers;
  called("hsa_signal_create");
  return new_signal(initial, out);
}

EXPORT hsa_status_t hsa_amd_signal_create(int64_t initial, uint32_t n, const hsa_agent_t *consumers, uint64_t attributes,
                                          hsa_signal_t *out) {
  (void)n; (void)consumers; (void)attributes;
  called("hsa_amd_signal_create");
  return new_signal(initial, out);
}

EXPORT hsa_status_t hsa_signal_destroy(hsa_signal_t signal) {
  called("hsa_signal_destroy");
  signal_t *s = as_signal(signal);
  if (!s) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  while (s->handlers) { handler_t *h = s->handlers; s->handlers = h->next; free(h); }
  s->magic = 0;
  free(s);
  return HSA_STATUS_SUCCESS;
}

static void retire(queue_t *q);

static void store(hsa_signal_t signal, int64_t value) {
  signal_t *s = as_signal(signal);
  if (!s) return;
  __atomic_store_n(&s->value, value, __ATOMIC_SEQ_CST);
  if (s->doorbell_of) retire(s->doorbell_of);
  else fire_handlers(s);
}

EXPORT void hsa_signal_store_relaxed(hsa_signal_t signal, int64_t value) { called("hsa_signal_store_relaxed"); store(signal, value); }
EXPORT void hsa_signal_store_screlease(hsa_signal_t signal, int64_t value) { called("hsa_signal_store_screlease"); store(signal, value); }
EXPORT void hsa_signal_silent_store_relaxed(hsa_signal_t signal, int64_t value) {
  called("hsa_signal_silent_store_relaxed");
  signal_t *s = as_signal(signal);
  if (s) __atomic_store_n(&s->value, value, __ATOMIC_SEQ_CST);
}

EXPORT int64_t hsa_signal_load_relaxed(hsa_signal_t signal) {
  called("hsa_signal_load_relaxed");
  signal_t *s = as_signal(signal);
  return s ? __atomic_load_n(&s->value, __ATOMIC_SEQ_CST) : 0;
}

static void add(hsa_signal_t signal, int64_t delta) {
  signal_t *s = as_signal(signal);
  if (!s) return;
  __atomic_add_fetch(&s->value, delta, __ATOMIC_SEQ_CST);
  fire_handlers(s);
}
EXPORT void hsa_signal_add_relaxed(hsa_signal_t signal, int64_t v) { called("hsa_signal_add_relaxed"); add(signal, v); }
EXPORT void hsa_signal_subtract_relaxed(hsa_signal_t signal, int64_t v) { called("hsa_signal_subtract_relaxed"); add(signal, -v); }

/* Nothing is pending on the emulated device: every packet retires when it is submitted, so a
 * wait returns the current value at once whether or not the condition holds (a real wait would
 * block until the timeout). */
EXPORT int64_t hsa_signal_wait_scacquire(hsa_signal_t signal, uint32_t cond, int64_t cmp, uint64_t timeout, uint32_t hint) {
  (void)cond; (void)cmp; (void)timeout; (void)hint;
  called("hsa_signal_wait_scacquire");
  signal_t *s = as_signal(signal);
  return s ? __atomic_load_n(&s->value, __ATOMIC_SEQ_CST) : 0;
}

EXPORT hsa_status_t hsa_amd_signal_async_handler(hsa_signal_t signal, uint32_t cond, int64_t value,
                                                 bool (*fn)(int64_t, void *), void *arg) {
  called("hsa_amd_signal_async_handler");
  signal_t *s = as_signal(signal);
  if (!s || !fn) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  handler_t *h = calloc(1, sizeof *h);
  if (!h) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  h->cond = cond; h->value = value; h->fn = fn; h->arg = arg;
  pthread_mutex_lock(&signal_lock);
  h->next = s->handlers;
  s->handlers = h;
  pthread_mutex_unlock(&signal_lock);
  fire_handlers(s);
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_amd_signal_value_pointer(hsa_signal_t signal, volatile int64_t **ptr) {
  called("hsa_amd_signal_value_pointer");
  signal_t *s = as_signal(signal);
  if (!s) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *ptr = &s->value;
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_amd_memory_async_copy(void *dst, hsa_agent_t dst_agent, const void *src, hsa_agent_t src_agent,
                                              size_t size, uint32_t num_deps, const hsa_signal_t *deps,
                                              hsa_signal_t completion) {
  (void)dst_agent; (void)src_agent; (void)num_deps; (void)deps;
  called("hsa_amd_memory_async_copy");
  memmove(dst, src, size);  /* all memory is host memory: the copy is done at once */
  add(completion, -1);
  return HSA_STATUS_SUCCESS;
}

/* ---- queues: packets are retired, never run ---- */
struct queue_s {
  hsa_queue_t q;  /* first: the handle the runtime holds points here */
  volatile uint64_t read_index, write_index;
  hsa_signal_t doorbell;
};

/* The packet processor of the emulated device: every packet from the read index up to the
 * write index is retired as if it had run, in order: its completion signal (offset 56 of each
 * 64-byte AQL packet, for dispatch and barrier packets alike, hsa.h) is decremented and its
 * header set to INVALID. Kernels do not execute. */
static void retire(queue_t *q) {
  uint64_t w = __atomic_load_n(&q->write_index, __ATOMIC_SEQ_CST);
  while (q->read_index < w) {
    uint8_t *pkt = (uint8_t *)q->q.base_address + (q->read_index % q->q.size) * 64;
    uint16_t header = *(volatile uint16_t *)pkt;
    if ((header & 0xff) == PACKET_TYPE_INVALID) break;  /* not yet published */
    hsa_signal_t done;
    memcpy(&done, pkt + 56, sizeof done);
    __atomic_store_n((uint16_t *)pkt, (uint16_t)PACKET_TYPE_INVALID, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&q->read_index, 1, __ATOMIC_SEQ_CST);
    if (done.handle) add(done, -1);
  }
}

EXPORT hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, uint32_t type, void *callback, void *data,
                                     uint32_t private_size, uint32_t group_size, hsa_queue_t **out) {
  (void)callback; (void)data; (void)private_size; (void)group_size;
  called("hsa_queue_create");
  if (agent.handle != (uint64_t)(uintptr_t)&gpu_agent) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (size == 0 || (size & (size - 1)) || size > 131072) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  queue_t *q = calloc(1, sizeof *q);
  void *ring = NULL;
  if (!q || posix_memalign(&ring, 4096, (size_t)size * 64) != 0) { free(q); return HSA_STATUS_ERROR_OUT_OF_RESOURCES; }
  for (uint32_t i = 0; i < size; i++) *(uint16_t *)((uint8_t *)ring + (size_t)i * 64) = PACKET_TYPE_INVALID;
  static uint64_t next_id;
  q->q.type = type;
  q->q.features = 1;  /* HSA_QUEUE_FEATURE_KERNEL_DISPATCH */
  q->q.base_address = ring;
  q->q.size = size;
  q->q.id = __atomic_fetch_add(&next_id, 1, __ATOMIC_SEQ_CST);
  new_signal(0, &q->doorbell);
  as_signal(q->doorbell)->doorbell_of = q;
  q->q.doorbell_signal = q->doorbell;
  *out = &q->q;
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_queue_destroy(hsa_queue_t *queue) {
  called("hsa_queue_destroy");
  queue_t *q = (queue_t *)queue;
  if (!q) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  signal_t *s = as_signal(q->doorbell);
  if (s) { s->magic = 0; free(s); }
  free(q->q.base_address);
  free(q);
  return HSA_STATUS_SUCCESS;
}

EXPORT uint64_t hsa_queue_load_read_index_relaxed(const hsa_queue_t *queue) {
  called("hsa_queue_load_read_index_relaxed");
  return __atomic_load_n(&((const queue_t *)queue)->read_index, __ATOMIC_SEQ_CST);
}
EXPORT uint64_t hsa_queue_load_read_index_scacquire(const hsa_queue_t *queue) {
  called("hsa_queue_load_read_index_scacquire");
  return __atomic_load_n(&((const queue_t *)queue)->read_index, __ATOMIC_SEQ_CST);
}
EXPORT uint64_t hsa_queue_load_write_index_relaxed(const hsa_queue_t *queue) {
  called("hsa_queue_load_write_index_relaxed");
  return __atomic_load_n(&((const queue_t *)queue)->write_index, __ATOMIC_SEQ_CST);
}
EXPORT uint64_t hsa_queue_load_write_index_scacquire(const hsa_queue_t *queue) {
  called("hsa_queue_load_write_index_scacquire");
  return __atomic_load_n(&((const queue_t *)queue)->write_index, __ATOMIC_SEQ_CST);
}
EXPORT uint64_t hsa_queue_add_write_index_screlease(const hsa_queue_t *queue, uint64_t value) {
  called("hsa_queue_add_write_index_screlease");
  return __atomic_fetch_add(&((queue_t *)queue)->write_index, value, __ATOMIC_SEQ_CST);
}

/* hsa_queue_info_attribute_t (hsa_ext_amd.h): HSA_AMD_QUEUE_INFO_AGENT (0, hsa_agent_t) and
 * HSA_AMD_QUEUE_INFO_DOORBELL_ID (1, uint64_t) */
EXPORT hsa_status_t hsa_amd_queue_get_info(hsa_queue_t *queue, uint32_t attribute, void *value) {
  called("hsa_amd_queue_get_info");
  if (!queue || !value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (attribute) {
  case 0: ((hsa_agent_t *)value)->handle = (uint64_t)(uintptr_t)&gpu_agent; return 0;
  case 1: *(uint64_t *)value = ((queue_t *)queue)->doorbell.handle; return 0;
  }
  return refused_or_unmodeled("queue_info", attribute);
}

EXPORT hsa_status_t hsa_amd_profiling_set_profiler_enabled(hsa_queue_t *queue, int enable) {
  (void)queue; (void)enable;
  called("hsa_amd_profiling_set_profiler_enabled");
  return HSA_STATUS_SUCCESS;  /* nothing runs, so there is nothing to time */
}

/* ---- the loader: code-object readers, executables, symbols ---- */
typedef struct { uint8_t *data; size_t size; } reader_t;
typedef struct symbol_s {
  char *name;
  uint64_t address, size;
  int kind;  /* SYMBOL_KIND_KERNEL or _VARIABLE */
  struct executable_s *exec;
} symbol_t;
typedef struct executable_s {
  int frozen;
  uint8_t *image;  /* the code object as loaded by the runtime (a private copy) */
  size_t image_size;
  uint8_t *base;   /* the mapped segments */
  uint64_t min_vaddr, map_size;
  symbol_t *symbols;
  size_t nsymbols;
  int loaded;
  struct executable_s *next;
} executable_t;
static executable_t *executables;
static pthread_mutex_t loader_lock = PTHREAD_MUTEX_INITIALIZER;

EXPORT hsa_status_t hsa_code_object_reader_create_from_memory(const void *code, size_t size, hsa_code_object_reader_t *out) {
  called("hsa_code_object_reader_create_from_memory");
  if (!code || !size || !out) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  reader_t *r = calloc(1, sizeof *r);
  if (!r || !(r->data = malloc(size))) { free(r); return HSA_STATUS_ERROR_OUT_OF_RESOURCES; }
  memcpy(r->data, code, size);
  r->size = size;
  out->handle = (uint64_t)(uintptr_t)r;
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t reader) {
  called("hsa_code_object_reader_destroy");
  reader_t *r = (reader_t *)(uintptr_t)reader.handle;
  if (!r) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
  free(r->data);
  free(r);
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_executable_create_alt(uint32_t profile, uint32_t rounding, const char *options, hsa_executable_t *out) {
  (void)profile; (void)rounding; (void)options;
  called("hsa_executable_create_alt");
  executable_t *e = calloc(1, sizeof *e);
  if (!e) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  pthread_mutex_lock(&loader_lock);
  e->next = executables;
  executables = e;
  pthread_mutex_unlock(&loader_lock);
  out->handle = (uint64_t)(uintptr_t)e;
  return HSA_STATUS_SUCCESS;
}

static executable_t *as_exec(hsa_executable_t h) {
  executable_t *found = NULL;
  pthread_mutex_lock(&loader_lock);
  for (executable_t *e = executables; e; e = e->next)
    if ((uint64_t)(uintptr_t)e == h.handle) found = e;
  pthread_mutex_unlock(&loader_lock);
  return found;
}

/* ELF64 little-endian readers, bounds-checked */
static int rd(const uint8_t *d, size_t size, uint64_t off, size_t n, void *out) {
  if (off > size || n > size - off) return 0;
  memcpy(out, d + off, n);
  return 1;
}

/* Map the PT_LOAD segments and collect the symbols of .dynsym (or .symtab). Kernels are the
 * STT_OBJECT symbols named "<kernel>.kd" (code object v3+, the kernel descriptor: LLVM
 * AMDGPUUsage "Kernel Descriptor"). */
static hsa_status_t load_elf(executable_t *e, const uint8_t *d, size_t size) {
  uint8_t ident[16];
  if (!rd(d, size, 0, 16, ident) || memcmp(ident, "\177ELF", 4) || ident[4] != 2 || ident[5] != 1)
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  uint16_t machine = 0, phnum = 0, shnum = 0, phentsize = 0, shentsize = 0;
  uint64_t phoff = 0, shoff = 0;
  if (!rd(d, size, 18, 2, &machine) || machine != 224 /* EM_AMDGPU */) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  rd(d, size, 32, 8, &phoff); rd(d, size, 40, 8, &shoff);
  rd(d, size, 54, 2, &phentsize); rd(d, size, 56, 2, &phnum);
  rd(d, size, 58, 2, &shentsize); rd(d, size, 60, 2, &shnum);
  if (phentsize != 56 || (shnum && shentsize != 64)) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (uint16_t i = 0; i < phnum; i++) {
    uint32_t type = 0; uint64_t vaddr = 0, memsz = 0;
    if (!rd(d, size, phoff + (uint64_t)i * 56, 4, &type)) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    if (type != 1) continue;  /* PT_LOAD */
    rd(d, size, phoff + (uint64_t)i * 56 + 16, 8, &vaddr);
    rd(d, size, phoff + (uint64_t)i * 56 + 40, 8, &memsz);
    if (vaddr < lo) lo = vaddr;
    if (vaddr + memsz > hi) hi = vaddr + memsz;
  }
  if (lo == UINT64_MAX || hi - lo > (1ull << 32)) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  uint64_t map = (hi - lo + 4095) & ~4095ull;
  void *base = NULL;
  if (posix_memalign(&base, 4096, map ? map : 4096) != 0) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  memset(base, 0, map ? map : 4096);
  for (uint16_t i = 0; i < phnum; i++) {
    uint32_t type = 0; uint64_t off = 0, vaddr = 0, filesz = 0;
    rd(d, size, phoff + (uint64_t)i * 56, 4, &type);
    if (type != 1) continue;
    rd(d, size, phoff + (uint64_t)i * 56 + 8, 8, &off);
    rd(d, size, phoff + (uint64_t)i * 56 + 16, 8, &vaddr);
    rd(d, size, phoff + (uint64_t)i * 56 + 32, 8, &filesz);
    if (off > size || filesz > size - off) { free(base); return HSA_STATUS_ERROR_INVALID_CODE_OBJECT; }
    memcpy((uint8_t *)base + (vaddr - lo), d + off, filesz);
  }
  /* symbols */
  int want_types[2] = {11 /* SHT_DYNSYM */, 2 /* SHT_SYMTAB */};
  for (int pass = 0; pass < 2 && e->nsymbols == 0; pass++) {
    for (uint16_t i = 0; i < shnum; i++) {
      uint32_t type = 0, link = 0; uint64_t off = 0, sz = 0, entsize = 0;
      uint64_t sh = shoff + (uint64_t)i * 64;
      if (!rd(d, size, sh + 4, 4, &type) || type != (uint32_t)want_types[pass]) continue;
      rd(d, size, sh + 24, 8, &off); rd(d, size, sh + 32, 8, &sz);
      rd(d, size, sh + 40, 4, &link); rd(d, size, sh + 56, 8, &entsize);
      uint64_t stroff = 0, strsz = 0;
      if (entsize != 24 || link >= shnum) continue;
      rd(d, size, shoff + (uint64_t)link * 64 + 24, 8, &stroff);
      rd(d, size, shoff + (uint64_t)link * 64 + 32, 8, &strsz);
      if (stroff > size || strsz > size - stroff || off > size || sz > size - off) continue;
      size_t n = (size_t)(sz / 24);
      symbol_t *syms = calloc(n ? n : 1, sizeof *syms);
      if (!syms) { free(base); return HSA_STATUS_ERROR_OUT_OF_RESOURCES; }
      size_t k = 0;
      for (size_t j = 1; j < n; j++) {
        uint32_t name = 0; uint8_t info = 0; uint16_t shndx = 0; uint64_t value = 0, ssize = 0;
        uint64_t p = off + j * 24;
        rd(d, size, p, 4, &name); rd(d, size, p + 4, 1, &info); rd(d, size, p + 6, 2, &shndx);
        rd(d, size, p + 8, 8, &value); rd(d, size, p + 16, 8, &ssize);
        if (shndx == 0 || (info & 0xf) != 1 /* STT_OBJECT */ || (info >> 4) == 0 /* STB_LOCAL */) continue;
        if (name >= strsz) continue;
        const char *s = (const char *)d + stroff + name;
        size_t len = strnlen(s, (size_t)(strsz - name));
        if (len == (size_t)(strsz - name)) continue;
        if (value < lo || value >= hi) continue;
        syms[k].name = strndup(s, len);
        syms[k].address = (uint64_t)(uintptr_t)base + (value - lo);
        syms[k].size = ssize;
        syms[k].kind = len > 3 && strcmp(s + len - 3, ".kd") == 0 ? SYMBOL_KIND_KERNEL : SYMBOL_KIND_VARIABLE;
        syms[k].exec = e;
        k++;
      }
      e->symbols = syms;
      e->nsymbols = k;
      break;
    }
  }
  e->base = base;
  e->min_vaddr = lo;
  e->map_size = map;
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_executable_load_agent_code_object(hsa_executable_t exec, hsa_agent_t agent,
                                                          hsa_code_object_reader_t reader, const char *options,
                                                          hsa_loaded_code_object_t *loaded) {
  (void)options;
  called("hsa_executable_load_agent_code_object");
  executable_t *e = as_exec(exec);
  reader_t *r = (reader_t *)(uintptr_t)reader.handle;
  if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!r) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
  if (agent.handle != (uint64_t)(uintptr_t)&gpu_agent) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (e->frozen) return HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
  if (e->loaded) return unmodeled("hsa_executable_load_agent_code_object:second code object");
  hsa_status_t s = load_elf(e, r->data, r->size);
  if (s != HSA_STATUS_SUCCESS) return s;
  e->image = malloc(r->size);
  if (e->image) { memcpy(e->image, r->data, r->size); e->image_size = r->size; }
  e->loaded = 1;
  if (loaded) loaded->handle = (uint64_t)(uintptr_t)e;  /* one loaded code object per executable */
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_executable_freeze(hsa_executable_t exec, const char *options) {
  (void)options;
  called("hsa_executable_freeze");
  executable_t *e = as_exec(exec);
  if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  e->frozen = 1;
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_executable_destroy(hsa_executable_t exec) {
  called("hsa_executable_destroy");
  pthread_mutex_lock(&loader_lock);
  executable_t **link = &executables, *e = NULL;
  for (; *link; link = &(*link)->next)
    if ((uint64_t)(uintptr_t)*link == exec.handle) { e = *link; *link = e->next; break; }
  pthread_mutex_unlock(&loader_lock);
  if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  for (size_t i = 0; i < e->nsymbols; i++) free(e->symbols[i].name);
  free(e->symbols);
  free(e->base);
  free(e->image);
  free(e);
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_executable_get_symbol_by_name(hsa_executable_t exec, const char *name, const hsa_agent_t *agent,
                                                      hsa_executable_symbol_t *out) {
  (void)agent;
  called("hsa_executable_get_symbol_by_name");
  executable_t *e = as_exec(exec);
  if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!name) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (size_t i = 0; i < e->nsymbols; i++)
    if (strcmp(e->symbols[i].name, name) == 0) { out->handle = (uint64_t)(uintptr_t)&e->symbols[i]; return 0; }
  return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
}

static uint32_t kd_u32(const symbol_t *s, size_t off) {
  uint32_t v = 0;
  if (s->kind == SYMBOL_KIND_KERNEL) memcpy(&v, (const uint8_t *)(uintptr_t)s->address + off, 4);
  return v;
}

EXPORT hsa_status_t hsa_executable_symbol_get_info(hsa_executable_symbol_t sym, uint32_t attribute, void *value) {
  called("hsa_executable_symbol_get_info");
  symbol_t *s = (symbol_t *)(uintptr_t)sym.handle;
  if (!s) return HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL;
  int kernel = s->kind == SYMBOL_KIND_KERNEL;
  switch (attribute) {
  case SYM_TYPE: *(uint32_t *)value = (uint32_t)s->kind; return 0;
  case SYM_NAME_LENGTH: *(uint32_t *)value = (uint32_t)strlen(s->name); return 0;
  case SYM_NAME: memcpy(value, s->name, strlen(s->name)); return 0;
  case SYM_MODULE_NAME_LENGTH: *(uint32_t *)value = 0; return 0;
  case SYM_MODULE_NAME: return 0;
  case SYM_AGENT: ((hsa_agent_t *)value)->handle = (uint64_t)(uintptr_t)&gpu_agent; return 0;
  case SYM_LINKAGE: *(uint32_t *)value = 1; return 0;          /* HSA_SYMBOL_LINKAGE_PROGRAM */
  case SYM_IS_DEFINITION: *(bool *)value = true; return 0;
  }
  if (kernel) {
    /* kernel descriptor (LLVM AMDGPUUsage, "Kernel Descriptor"): group_segment_fixed_size at 0,
     * private_segment_fixed_size at 4, kernarg_size at 8, kernel_code_properties (u16) at 56,
     * whose bit 11 is USES_DYNAMIC_STACK */
    switch (attribute) {
    case SYM_KERNEL_OBJECT: *(uint64_t *)value = s->address; return 0;
    case SYM_KERNEL_GROUP_SEGMENT_SIZE: *(uint32_t *)value = kd_u32(s, 0); return 0;
    case SYM_KERNEL_PRIVATE_SEGMENT_SIZE: *(uint32_t *)value = kd_u32(s, 4); return 0;
    case SYM_KERNEL_KERNARG_SEGMENT_SIZE: *(uint32_t *)value = kd_u32(s, 8); return 0;
    case SYM_KERNEL_KERNARG_SEGMENT_ALIGNMENT: *(uint32_t *)value = 16; return 0;  /* the HSA minimum */
    case SYM_KERNEL_DYNAMIC_CALLSTACK: *(bool *)value = (kd_u32(s, 56) >> 11) & 1; return 0;
    case SYM_KERNEL_CALL_CONVENTION: *(uint32_t *)value = 0; return 0;
    }
  } else {
    switch (attribute) {
    case SYM_VARIABLE_ADDRESS: *(uint64_t *)value = s->address; return 0;
    case SYM_VARIABLE_ALLOCATION: *(uint32_t *)value = 0; return 0;  /* AGENT */
    case SYM_VARIABLE_SEGMENT: *(uint32_t *)value = 0; return 0;     /* GLOBAL */
    case SYM_VARIABLE_ALIGNMENT: *(uint32_t *)value = 8; return 0;
    case SYM_VARIABLE_SIZE: *(uint32_t *)value = (uint32_t)s->size; return 0;
    case SYM_VARIABLE_IS_CONST: *(bool *)value = false; return 0;
    }
  }
  return unmodeled("symbol_info:0x%x", attribute);
}

/* ---- the AMD loader extension (hsa_ven_amd_loader.h) ---- */
static executable_t *exec_of_address(const void *addr) {
  executable_t *found = NULL;
  uintptr_t a = (uintptr_t)addr;
  pthread_mutex_lock(&loader_lock);
  for (executable_t *e = executables; e; e = e->next)
    if (e->base && a >= (uintptr_t)e->base && a < (uintptr_t)e->base + e->map_size) found = e;
  pthread_mutex_unlock(&loader_lock);
  return found;
}

static hsa_status_t loader_query_host_address(const void *device_address, const void **host_address) {
  called("hsa_ven_amd_loader_query_host_address");
  if (!exec_of_address(device_address)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *host_address = device_address;  /* device memory is host memory here */
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t loader_query_segment_descriptors(void *descriptors, size_t *n) {
  (void)descriptors; (void)n;
  called("hsa_ven_amd_loader_query_segment_descriptors");
  return unmodeled("hsa_ven_amd_loader_query_segment_descriptors");
}

static hsa_status_t loader_query_executable(const void *device_address, hsa_executable_t *exec) {
  called("hsa_ven_amd_loader_query_executable");
  executable_t *e = exec_of_address(device_address);
  if (!e) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  exec->handle = (uint64_t)(uintptr_t)e;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t loader_iterate_loaded_code_objects(hsa_executable_t exec,
    hsa_status_t (*cb)(hsa_executable_t, hsa_loaded_code_object_t, void *), void *data) {
  called("hsa_ven_amd_loader_executable_iterate_loaded_code_objects");
  executable_t *e = as_exec(exec);
  if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!e->loaded) return HSA_STATUS_SUCCESS;
  hsa_loaded_code_object_t lco = {(uint64_t)(uintptr_t)e};
  hsa_status_t s = cb(exec, lco, data);
  return s == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : s;
}

static hsa_status_t loader_loaded_code_object_get_info(hsa_loaded_code_object_t lco, uint32_t attribute, void *value) {
  called("hsa_ven_amd_loader_loaded_code_object_get_info");
  executable_t *e = as_exec((hsa_executable_t){lco.handle});
  if (!e) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  char uri[96];
  snprintf(uri, sizeof uri, "memory://%d#offset=0x%llx&size=%llu", (int)getpid(),
           (unsigned long long)(uintptr_t)e->image, (unsigned long long)e->image_size);
  switch (attribute) {
  case LCO_EXECUTABLE: ((hsa_executable_t *)value)->handle = (uint64_t)(uintptr_t)e; return 0;
  case LCO_KIND: *(uint32_t *)value = 2; return 0;            /* ..._KIND_AGENT */
  case LCO_AGENT: ((hsa_agent_t *)value)->handle = (uint64_t)(uintptr_t)&gpu_agent; return 0;
  case LCO_STORAGE_TYPE: *(uint32_t *)value = 2; return 0;    /* ..._STORAGE_TYPE_MEMORY */
  case LCO_MEMORY_BASE: *(uint64_t *)value = (uint64_t)(uintptr_t)e->image; return 0;
  case LCO_MEMORY_SIZE: *(uint64_t *)value = e->image_size; return 0;
  case LCO_LOAD_DELTA: *(int64_t *)value = (int64_t)((uintptr_t)e->base - e->min_vaddr); return 0;
  case LCO_LOAD_BASE: *(uint64_t *)value = (uint64_t)(uintptr_t)e->base; return 0;
  case LCO_LOAD_SIZE: *(uint64_t *)value = e->map_size; return 0;
  case LCO_URI_LENGTH: *(uint32_t *)value = (uint32_t)strlen(uri); return 0;
  case LCO_URI: memcpy(value, uri, strlen(uri)); return 0;
  }
  return unmodeled("loaded_code_object_info:0x%x", attribute);
}

static hsa_status_t loader_reader_from_file(int file, size_t offset, size_t size, hsa_code_object_reader_t *reader) {
  (void)file; (void)offset; (void)size; (void)reader;
  called("hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size");
  return unmodeled("hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size");
}

static hsa_status_t loader_iterate_executables(hsa_status_t (*cb)(hsa_executable_t, void *), void *data) {
  called("hsa_ven_amd_loader_iterate_executables");
  for (executable_t *e = executables; e; e = e->next) {
    hsa_status_t s = cb((hsa_executable_t){(uint64_t)(uintptr_t)e}, data);
    if (s == HSA_STATUS_INFO_BREAK) return HSA_STATUS_SUCCESS;
    if (s != HSA_STATUS_SUCCESS) return s;
  }
  return HSA_STATUS_SUCCESS;
}

/* hsa_ven_amd_loader_1_03_pfn_t: seven function pointers in this order */
static void *const loader_table[] = {
  (void *)loader_query_host_address, (void *)loader_query_segment_descriptors, (void *)loader_query_executable,
  (void *)loader_iterate_loaded_code_objects, (void *)loader_loaded_code_object_get_info,
  (void *)loader_reader_from_file, (void *)loader_iterate_executables,
};

EXPORT hsa_status_t hsa_system_get_major_extension_table(uint16_t extension, uint16_t major, size_t length, void *table) {
  called("hsa_system_get_major_extension_table");
  if (extension == EXT_AMD_LOADER && major == 1) {
    size_t n = length / sizeof(void *);
    if (n > sizeof loader_table / sizeof loader_table[0]) n = sizeof loader_table / sizeof loader_table[0];
    memset(table, 0, length);
    memcpy(table, loader_table, n * sizeof(void *));
    return HSA_STATUS_SUCCESS;
  }
  return unmodeled("extension_table:0x%x", extension);
}

/* ROCm 5.2's HIP asks which extensions exist (hsa_system_extension_supported): the loader only. */
EXPORT hsa_status_t hsa_system_extension_supported(uint16_t extension, uint16_t major, uint16_t minor, bool *result) {
  (void)minor;
  called("hsa_system_extension_supported");
  *result = extension == EXT_AMD_LOADER && major == 1;
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_agent_extension_supported(uint16_t extension, hsa_agent_t agent, uint16_t major, uint16_t minor,
                                                  bool *result) {
  (void)agent; (void)minor;
  called("hsa_agent_extension_supported");
  *result = extension == EXT_AMD_LOADER && major == 1;
  return HSA_STATUS_SUCCESS;
}

/* ---- everything else libamdhip64 (7.14 and 5.2.3) imports: counted, refused ---- */
#define UNMODELED(fn) \
  EXPORT hsa_status_t fn(void) { called(#fn); return unmodeled(#fn); }
#include "unmodeled.def"
