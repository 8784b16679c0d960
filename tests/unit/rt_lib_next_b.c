/* rt_lib_next_b.c - test library: the next definition of rt_next_probe (2). */
__attribute__((visibility("default"))) int rt_next_probe(void)
{
    return 2;
}
