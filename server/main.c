/*
 * main.c - the `tfboard` program: everything but this line lives in the
 * server library (cli.c), so that a build with extra dashboards is a
 * main() that registers them first (tests/plugin/).
 */
#include "cli.h"

int main(int argc, char **argv)
{
    return tfb_cli_main(argc, argv);
}
