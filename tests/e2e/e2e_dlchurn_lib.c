/* e2e_dlchurn_lib.c - a library of no interest to the shim, opened and closed over and over by e2e_dlchurn. */
int e2e_dlchurn_answer(void);
int e2e_dlchurn_answer(void)
{
    return 42;
}
