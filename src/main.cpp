// ringscale: parse -> build -> run -> write; all of it in src/launcher/.
#include "src/launcher/launcher.hpp"

int main(int argc, char** argv) {
    return ringscale::run_launcher(argc, argv);
}
