/// PCRE2 with 8-bit code units (UTF-8), as MongoDB uses it for `$regex`. pcre2.h names its
/// functions and types through macros that Swift cannot import (`pcre2_compile` is
/// `pcre2_compile_8`), so Swift calls the `_8` names.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

/// Whether this build of PCRE2 has its just-in-time compiler (it depends on the processor).
static inline int reef_pcre2_jit_available(void) {
  uint32_t jit = 0;
  return pcre2_config_8(PCRE2_CONFIG_JIT, &jit) >= 0 && jit == 1;
}
