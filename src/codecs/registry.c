/* The table of codecs the CPU backend knows. */
#include "fz_codec.h"

const fz_codec_cpu *fz_codec_cpu_find(uint32_t id) {
    static const fz_codec_cpu *const all[] = {&fz_sleek_cpu, &fz_gfc_cpu,
                                              &fz_falcon_cpu, &fz_lorenzo_cpu};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->id == id)
            return all[i];
    return NULL;
}
