namespace ringscale {
const char* tool_version() {
    return RINGSCALE_VERSION;
}
const char* git_commit() {
    return RINGSCALE_GIT_COMMIT;
}
const char* build_cxxflags() {
    return RINGSCALE_CXXFLAGS;
}
} // namespace ringscale
