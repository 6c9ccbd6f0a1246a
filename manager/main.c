#include "manager/cli.h"

int main(int argc, char **argv)
{
    return mgr_cli_main(argc, argv);
}
