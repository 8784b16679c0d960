/*
 * rm_names.c - an API's id and a result code by name (rm_names.h): the one copy of two look-ups the client's
 * parts and the back end each made for themselves.
 */
#include "rm_names.h"

uint32_t rm_api_id(const cushim_host *h, const char *name, uint32_t missing)
{
    const cushim_api_info *a = h->api_by_name(name);
    return a != NULL ? a->id : missing;
}

int32_t rm_result_code(const cushim_host *h, const char *name, int32_t dflt)
{
    uint32_t kind;
    int32_t code = dflt;
    if (h->result_by_name(name, &kind, &code) != CUSHIM_OK)
        code = dflt;   /* not trusted to leave it untouched */
    return code;
}
