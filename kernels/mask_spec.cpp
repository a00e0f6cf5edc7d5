#include "kernels/mask_spec.hpp"

#include "kernels/random.hpp"
#include "src/base/error.hpp"
#include "src/base/parse.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace ringscale::kernels {

namespace {

constexpr std::int64_t k_max_block_pairs = std::int64_t{1} << 26;

std::vector<std::string> split_on(const std::string& text, char sep) {
    std::vector<std::string> out(1);
    for (const char c : text) {
        if (c == sep)
            out.emplace_back();
        else
            out.back() += c;
    }
    return out;
}

std::int64_t length_of(const std::string& text, const char* option) {
    const auto v = parse_size(text, option);
    if (v < 1 || v > (std::uint64_t{1} << 40))
        throw config_error(
            fmt::format("--{}: '{}' is not a length of 1 to 1T tokens", option, text));
    return static_cast<std::int64_t>(v);
}

void check_fits(std::int64_t length, std::int64_t seq_len) {
    if (length > seq_len)
        throw config_error(fmt::format("--docs: a document of {} tokens is longer than the "
                                       "sequence ({} tokens)",
                                       length, seq_len));
}

// Lengths from `next()` until they reach seq_len; the last takes what remains.
template <class Next>
std::vector<std::int64_t> fill_lengths(std::int64_t seq_len, Next next) {
    std::vector<std::int64_t> out;
    std::int64_t sum = 0;
    while (sum < seq_len) {
        const std::int64_t l = std::min(next(out.size()), seq_len - sum);
        out.push_back(l);
        sum += l;
    }
    return out;
}

std::vector<std::int64_t> uniform_lengths(const std::string& spec, const std::string& range,
                                          std::int64_t seq_len) {
    const auto parts = split_on(range, '-');
    if (parts.size() != 2)
        throw config_error(fmt::format("--docs: '{}' is not uniform:LO-HI", spec));
    const std::int64_t lo = length_of(parts[0], "docs"), hi = length_of(parts[1], "docs");
    if (lo > hi)
        throw config_error(fmt::format("--docs: '{}' has LO above HI", spec));
    check_fits(hi, seq_len);
    std::int64_t g = 1024;
    while (lo % g != 0 || hi % g != 0)
        g /= 2;
    const auto choices = static_cast<std::uint64_t>((hi - lo) / g + 1);
    const std::uint64_t seed = fnv1a64("docs:" + spec);
    return fill_lengths(seq_len, [&](std::size_t i) {
        return lo + g * static_cast<std::int64_t>(mix64(seed ^ mix64(i)) % choices);
    });
}

std::string number_text(double v) {
    return fmt::format("{:g}", v);
}

} // namespace

bool mask_spec::any() const {
    return window > 0 || !docs.empty() || sparsity >= 0 || !dilation.empty();
}

std::string mask_spec::label() const {
    std::vector<std::string> parts;
    if (window > 0)
        parts.push_back(fmt::format("win={}", format_size(static_cast<std::uint64_t>(window))));
    if (!docs.empty())
        parts.push_back("docs=" + docs);
    if (sparsity >= 0) {
        std::string s = "sparse=" + number_text(sparsity);
        if (pattern != "random")
            s += "/" + pattern;
        if (block != 128)
            s += fmt::format("/b{}", block);
        parts.push_back(s);
    }
    if (!dilation.empty())
        parts.push_back("dil=" + dilation);
    return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, " "));
}

std::int64_t doc_count_bound(const std::string& spec, std::int64_t seq_len) {
    std::int64_t shortest = 0;
    if (spec.rfind("fixed:", 0) == 0)
        shortest = length_of(spec.substr(6), "docs");
    else if (spec.rfind("uniform:", 0) == 0)
        shortest = length_of(split_on(spec.substr(8), '-').front(), "docs");
    else
        return static_cast<std::int64_t>(split_on(spec, '+').size());
    return seq_len <= 0 ? 0 : (seq_len - 1) / shortest + 1;
}

namespace {

/// doc_count_bound, refused above max_docs: fixed:1 on 1G tokens would be 8 GiB of lengths.
std::int64_t checked_doc_count(const std::string& spec, std::int64_t seq_len) {
    const std::int64_t n = doc_count_bound(spec, seq_len);
    if (n > max_docs)
        throw config_error(fmt::format("--docs: '{}' cuts {} tokens into up to {} documents; at "
                                       "most {} (2^22)",
                                       spec.substr(0, 60), seq_len, n, max_docs));
    return n;
}

} // namespace

std::vector<std::int64_t> doc_lengths(const std::string& spec, std::int64_t seq_len) {
    checked_doc_count(spec, seq_len); // bounded before anything is allocated
    if (spec.rfind("fixed:", 0) == 0) {
        const std::int64_t l = length_of(spec.substr(6), "docs");
        check_fits(l, seq_len);
        return fill_lengths(seq_len, [&](std::size_t) { return l; });
    }
    if (spec.rfind("uniform:", 0) == 0)
        return uniform_lengths(spec, spec.substr(8), seq_len);
    std::vector<std::int64_t> out;
    std::int64_t sum = 0;
    for (const std::string& part : split_on(spec, '+')) {
        if (part.empty())
            throw config_error(fmt::format(
                "--docs: '{}' is not fixed:L, uniform:LO-HI or a list L1+L2+...", spec));
        out.push_back(length_of(part, "docs"));
        check_fits(out.back(), seq_len);
        sum += out.back();
    }
    if (sum != seq_len)
        throw config_error(fmt::format("--docs: the documents sum to {} tokens, not the sequence "
                                       "length {}",
                                       sum, seq_len));
    return out;
}

std::vector<dilation_pattern> parse_dilation(const std::string& spec) {
    std::vector<dilation_pattern> out;
    for (const std::string& part : split_on(spec, '+')) {
        const auto wr = split_on(part, ':');
        if (wr.size() != 2 || wr[0].empty() || wr[1].empty())
            throw config_error(
                fmt::format("--dilation: '{}' is not SEGMENT:RATE[+SEGMENT:RATE...]", spec));
        dilation_pattern d{length_of(wr[0], "dilation"), length_of(wr[1], "dilation")};
        if (d.segment % d.rate != 0)
            throw config_error(
                fmt::format("--dilation: rate {} does not divide segment {}", d.rate, d.segment));
        out.push_back(d);
    }
    if (out.size() > static_cast<std::size_t>(max_dilations))
        throw config_error(
            fmt::format("--dilation: at most {} patterns, got {}", max_dilations, out.size()));
    return out;
}

std::uint64_t mask_plan_bytes(const mask_spec& spec, std::int64_t seq_len) {
    const double s = static_cast<double>(std::max<std::int64_t>(seq_len, 0));
    double bytes = 3 * s * sizeof(std::int64_t); // every position, each rank's, a layout's copy
    if (!spec.docs.empty())
        bytes += 2.0 * static_cast<double>(checked_doc_count(spec.docs, seq_len) + 1) *
                 sizeof(std::int64_t); // lengths and starts
    if (spec.sparsity >= 0 && spec.block >= 1) {
        const double blocks = std::ceil(s / static_cast<double>(spec.block));
        bytes += blocks * blocks;
    }
    return bytes_from_estimate(bytes);
}

void check_mask_spec(const mask_spec& spec, std::int64_t seq_len) {
    if (!spec.docs.empty())
        doc_lengths(spec.docs, seq_len);
    if (!spec.dilation.empty())
        parse_dilation(spec.dilation);
    if (spec.sparsity < 0)
        return;
    if (!(spec.sparsity < 1.0))
        throw config_error(fmt::format("--sparsity: {} is out of range [0, 1): a block-sparse "
                                       "mask keeps some blocks",
                                       number_text(spec.sparsity)));
    if (spec.pattern != "random" && spec.pattern != "local_global")
        throw config_error(
            fmt::format("--sparse-pattern: '{}' is not random or local_global", spec.pattern));
    if (spec.block < 1)
        throw config_error("--sparse-block must be at least 1");
    const std::int64_t blocks = (seq_len + spec.block - 1) / spec.block;
    if (blocks > k_max_block_pairs / blocks)
        throw config_error(fmt::format("--sparse-block {}: {} x {} block pairs for {} tokens is "
                                       "more than 2^26; use a larger block",
                                       spec.block, blocks, blocks, seq_len));
}

std::vector<std::uint8_t> sparse_blocks(const mask_spec& spec, std::int64_t seq_len, bool causal) {
    const std::int64_t n = (seq_len + spec.block - 1) / spec.block;
    std::vector<std::uint8_t> keep(static_cast<std::size_t>(n * n), 0);
    auto candidate = [&](std::int64_t i, std::int64_t j) { return !causal || j <= i; };
    if (spec.pattern == "random") {
        const std::uint64_t seed =
            fnv1a64(fmt::format("sparse:{}:{}", number_text(spec.sparsity), spec.block));
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
                const std::uint64_t idx = static_cast<std::uint64_t>(i * n + j);
                const double u = static_cast<double>(mix64(seed ^ mix64(idx)) >> 11) * 0x1p-53;
                keep[static_cast<std::size_t>(idx)] = candidate(i, j) && u >= spec.sparsity;
            }
        return keep;
    }
    // local_global: the smallest band w keeping at least (1 - F) of the candidates.
    auto row_kept = [&](std::int64_t i, std::int64_t w) -> std::int64_t {
        if (i == 0)
            return causal ? 1 : n;
        const std::int64_t lo = std::max<std::int64_t>(0, i - w);
        const std::int64_t hi = std::min(n - 1, causal ? i : i + w);
        return hi - lo + 1 + (lo > 0 ? 1 : 0); // the band, and the global first column
    };
    auto kept_of = [&](std::int64_t w) {
        std::int64_t kept = 0;
        for (std::int64_t i = 0; i < n; ++i)
            kept += row_kept(i, w);
        return kept;
    };
    const std::int64_t candidates = causal ? n * (n + 1) / 2 : n * n;
    const double want = (1.0 - spec.sparsity) * static_cast<double>(candidates);
    std::int64_t lo = 0, hi = n; // kept_of is monotone in w
    while (lo < hi) {
        const std::int64_t mid = (lo + hi) / 2;
        if (static_cast<double>(kept_of(mid)) >= want)
            hi = mid;
        else
            lo = mid + 1;
    }
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j)
            keep[static_cast<std::size_t>(i * n + j)] =
                candidate(i, j) && (i == 0 || j == 0 || std::llabs(i - j) <= lo);
    return keep;
}

attention_mask::attention_mask(const mask_spec& spec, std::int64_t seq_len, bool causal)
    : m_spec(spec), m_seq_len(seq_len), m_causal(causal) {
    check_mask_spec(spec, seq_len);
    if (!spec.docs.empty()) {
        m_doc_start.push_back(0);
        for (const std::int64_t l : doc_lengths(spec.docs, seq_len))
            m_doc_start.push_back(m_doc_start.back() + l);
    }
    if (spec.sparsity >= 0)
        m_keep = sparse_blocks(spec, seq_len, causal);
    if (!spec.dilation.empty())
        m_dilation = parse_dilation(spec.dilation);
}

mask_view attention_mask::view() const {
    mask_view v;
    v.window = m_spec.window;
    if (!m_doc_start.empty()) {
        v.docs = static_cast<std::int64_t>(m_doc_start.size()) - 1;
        v.doc_start = m_doc_start.data();
    }
    if (!m_keep.empty()) {
        v.block = m_spec.block;
        v.blocks = (m_seq_len + m_spec.block - 1) / m_spec.block;
        v.keep = m_keep.data();
    }
    v.dilations = static_cast<int>(m_dilation.size());
    for (int i = 0; i < v.dilations; ++i) {
        v.segment[i] = m_dilation[static_cast<std::size_t>(i)].segment;
        v.rate[i] = m_dilation[static_cast<std::size_t>(i)].rate;
    }
    return v;
}

double attention_mask::block_sparsity() const {
    if (m_keep.empty())
        return std::numeric_limits<double>::quiet_NaN();
    const auto n = static_cast<std::int64_t>(std::llround(std::sqrt(double(m_keep.size()))));
    const std::int64_t candidates = m_causal ? n * (n + 1) / 2 : n * n;
    const auto kept = std::count(m_keep.begin(), m_keep.end(), std::uint8_t{1});
    return 1.0 - static_cast<double>(kept) / static_cast<double>(candidates);
}

} // namespace ringscale::kernels
