/* The table of codecs the CPU backend knows. */
#include "fz_codec.h"

const fz_codec_cpu *fz_codec_cpu_find(uint32_t id) {
    static const fz_codec_cpu *const all[] = {&fz_sleek_cpu, &fz_falcon_cpu};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->id == id)
            return all[i];
    return NULL;
}

int fz_codec_apply_options(const fz_codec_cpu *codec, fz_header *h,
                           const int32_t options[4]) {
    if (codec == &fz_falcon_cpu)
        return fz_falcon_apply_options(h, options);
    for (int k = 0; k < 4; k++)
        if (options[k] != 0)
            return FZS_INVALID_ARGUMENT;
    return FZS_OK;
}
