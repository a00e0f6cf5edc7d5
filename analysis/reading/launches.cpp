#include "launches.hpp"

#include "analysis/cases/cases.hpp"
#include "src/base/error.hpp"
#include "src/base/results_schema.hpp"

#include <fmt/format.h>
#include <fstream>

namespace ringscale::analysis {

namespace {

constexpr std::size_t chunk_bytes = 1 << 16;

std::string root_text(const std::map<std::string, attr_value>& root, const char* name) {
    const auto it = root.find(name);
    return it == root.end() ? std::string() : it->second.text;
}

/// 64-bit FNV-1a of a file's bytes, read in chunks.
std::uint64_t file_hash(const std::string& path, std::uint64_t& size) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw error(error_kind::io, fmt::format("cannot read '{}'", path));
    std::uint64_t h = 1469598103934665603ull;
    std::string buf(chunk_bytes, '\0');
    size = 0;
    while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
        const auto n = static_cast<std::size_t>(in.gcount());
        for (std::size_t i = 0; i < n; ++i) {
            h ^= static_cast<unsigned char>(buf[i]);
            h *= 1099511628211ull;
        }
        size += n;
    }
    return h;
}

} // namespace

std::string launch_key(const std::string& path, const std::map<std::string, attr_value>& root) {
    const std::string id = root_text(root, schema::root_attr::launch_id);
    if (!id.empty())
        return fmt::format("id:{}|{}|{}", root_text(root, schema::root_attr::created_utc),
                           root_text(root, schema::root_attr::git_commit), id);
    std::uint64_t size = 0;
    const std::uint64_t h = file_hash(path, size);
    return fmt::format("content:{}:{:016x}", size, h);
}

bool same_content(const std::string& a, const std::string& b) {
    std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
    if (!x || !y)
        return false;
    std::string bx(chunk_bytes, '\0'), by(chunk_bytes, '\0');
    for (;;) {
        x.read(bx.data(), static_cast<std::streamsize>(bx.size()));
        y.read(by.data(), static_cast<std::streamsize>(by.size()));
        if (x.gcount() != y.gcount() || bx.compare(0, static_cast<std::size_t>(x.gcount()), by, 0,
                                                   static_cast<std::size_t>(y.gcount())) != 0)
            return false;
        if (x.gcount() == 0)
            return true;
    }
}

std::string launch_registry::earlier_file(const file_info& info) {
    auto& paths = m_paths[info.launch];
    const bool by_content = info.launch.rfind("content:", 0) == 0;
    for (const std::string& p : paths)
        if (!by_content || same_content(p, info.path))
            return p;
    paths.push_back(info.path);
    return "";
}

void launch_registry::replace_file(const file_info& info, const std::string& old_path) {
    for (std::string& p : m_paths[info.launch])
        if (p == old_path)
            p = info.path;
}

std::string run_key(const case_data& c) {
    std::string key = case_key(c);
    for (const char* name :
         {schema::attr::warmup, schema::attr::iterations, schema::attr::seed, schema::attr::repeat})
        key += fmt::format("|{}={}", name, c.text(name));
    return key;
}

std::vector<std::pair<std::string, std::string>>
drop_duplicate_cases(std::vector<case_data>& cases) {
    std::map<std::string, std::string> first; // run key -> group
    std::vector<std::pair<std::string, std::string>> dropped;
    std::vector<case_data> kept;
    for (case_data& c : cases) {
        const auto [it, inserted] = first.emplace(run_key(c), c.group);
        if (inserted)
            kept.push_back(std::move(c));
        else
            dropped.emplace_back(c.group, it->second);
    }
    cases = std::move(kept);
    return dropped;
}

} // namespace ringscale::analysis
