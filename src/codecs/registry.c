/* The table of codecs the CPU backend knows. */
#include "fz_codec.h"

#include "../api/fz_internal.h"

const fz_codec_cpu *fz_codec_cpu_find(uint32_t id) {
    static const fz_codec_cpu *const all[] = {&fz_sleek_cpu, &fz_gfc_cpu,
                                              &fz_falcon_cpu, &fz_lorenzo_cpu};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->id == id)
            return all[i];
    return NULL;
}

uint32_t fz_codec_oldest_version(uint32_t id) {
    const fz_codec_cpu *c = fz_codec_cpu_find(id);
    return c ? c->oldest_version : UINT32_MAX;
}
