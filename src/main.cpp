// ringscale launcher entry point (the launcher itself lands in the next commits).
#include <cstdio>

int main() {
    std::puts("ringscale: launcher not built yet");
    return 1;
}
