#include "history_options.hpp"

#include "option_ranges.hpp"
#include "shared.hpp"

#include "src/base/error.hpp"
#include "src/base/parse.hpp"
#include "src/base/text_escape.hpp"
#include "src/base/text_file.hpp"

#include <ctime>
#include <fmt/format.h>
#include <set>
#include <sstream>

namespace po = boost::program_options;

namespace ringscale::analysis {

namespace {

/// The commits of a --commits file in order: one per line, blank lines and '#' comments
/// skipped; a line with a control character or over 256 bytes is refused.
std::vector<std::string> read_commits(const std::string& path) {
    std::istringstream in(read_text_file(path, std::uint64_t{16} << 20, "--commits file"));
    std::vector<std::string> out;
    std::set<std::string> seen;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
            line.pop_back();
        line.erase(0, line.find_first_not_of(" \t"));
        if (line.empty() || line[0] == '#')
            continue;
        for (const unsigned char c : line)
            RINGSCALE_REQUIRE(c >= 0x20 && c != 0x7f && line.size() <= 256,
                              fmt::format("--commits file line {}: not a commit name", n));
        RINGSCALE_REQUIRE(
            seen.insert(line).second,
            fmt::format("--commits file line {}: '{}' is listed twice", n, terminal_text(line)));
        out.push_back(line);
    }
    RINGSCALE_REQUIRE(!out.empty(), "--commits file names no commit");
    return out;
}

} // namespace

void declare_series_options(po::options_description& d, history::series_options& opt,
                            const std::string& prefix) {
    auto& ch = opt.change;
    const std::string p = prefix;
    d.add_options()(
        (p + "order").c_str(),
        po::value<std::string>()->default_value("time")->notifier([&opt, p](auto o) {
            if (o == "time")
                return;
            RINGSCALE_REQUIRE(o.rfind("label:", 0) == 0 && valid_label_key(o.substr(6)),
                              "--" + p + "order is time or label:KEY (a --label key)");
            opt.order_label = o.substr(6);
        }),
        "order of a series: time (launch date) or label:KEY (the label's values, numbers by "
        "value; --commits gives their order)")((p + "commits").c_str(), po::value<std::string>(),
                                               "file of the label's values in order, one a line")(
        (p + "env").c_str(), po::value<std::string>()->notifier([&opt, p](const std::string& e) {
            opt.env_keys = split_list(e, p + "env");
            for (const auto& k : opt.env_keys)
                RINGSCALE_REQUIRE(valid_label_key(k.rfind("label:", 0) == 0 ? k.substr(6) : k),
                                  "--" + p + "env: a /meta attribute or label:KEY");
        }),
        "what makes an environment besides nodes x ranks per node (default "
        "device_name,mpi_library,mpi_library_version,nccl_version; label:KEY for a label)")(
        (p + "alpha").c_str(),
        po::value<double>(&ch.alpha)->default_value(0.01, "0.01")->notifier([p](double a) {
            in_range(p + "alpha", a, probability);
        }),
        "significance of the whole run (a night): split over the series it judges, each "
        "tested at alpha / series (permutation test; a segment too short for one to reach "
        "it: the small-sample test)")(
        (p + "min-segment").c_str(), po::value<std::size_t>(&ch.min_segment)->default_value(3),
        "launches on each side of a change, at least (a lone spike is no change)")(
        (p + "min-effect").c_str(),
        po::value<std::string>()->default_value("2%")->notifier([&opt, p](auto t) {
            if (!t.empty() && t.back() == '%')
                t.pop_back();
            opt.change.min_effect = parse_double(t, p + "min-effect") / 100;
            RINGSCALE_REQUIRE(opt.change.min_effect >= 0 && opt.change.min_effect <= 10,
                              "--" + p + "min-effect is 0% to 1000%");
        }),
        "smallest change of the median that counts, in percent")(
        (p + "permutations").c_str(), po::value<std::size_t>(&ch.permutations)->default_value(999),
        "permutations per test (99 to 99999)")((p + "seed").c_str(),
                                               po::value<std::uint64_t>(&ch.seed)->default_value(1),
                                               "seed of the permutations")(
        (p + "skip-marked").c_str(), po::bool_switch(&opt.skip_marked),
        "leave launches measured on a marked machine (contended, drifted) out of their series; "
        "by default they stay, counted apart, and their marks "
        "enter each verdict through the decision rule")(
        (p + "keep-marked").c_str(), po::bool_switch(),
        "accepted: marked launches are kept by default");
}

void finish_series_options(const po::variables_map& vm, history::series_options& opt,
                           const std::string& prefix) {
    RINGSCALE_REQUIRE(opt.change.min_segment >= 2 && opt.change.min_segment <= 1000,
                      "--" + prefix + "min-segment is 2 to 1000 launches");
    RINGSCALE_REQUIRE(opt.change.permutations >= 99 && opt.change.permutations <= 99999,
                      "--" + prefix + "permutations is 99 to 99999");
    RINGSCALE_REQUIRE(!(opt.skip_marked && vm.count(prefix + "keep-marked") &&
                        vm[prefix + "keep-marked"].as<bool>()),
                      "--" + prefix + "skip-marked and --" + prefix + "keep-marked contradict");
    if (vm.count(prefix + "keep-marked") && vm[prefix + "keep-marked"].as<bool>())
        note("--" + prefix +
             "keep-marked: marked launches are kept by default; "
             "--" +
             prefix + "skip-marked leaves them out");
    if (vm.count(prefix + "commits")) {
        RINGSCALE_REQUIRE(!opt.order_label.empty(),
                          "--" + prefix + "commits needs --" + prefix + "order label:KEY");
        opt.commits = read_commits(vm[prefix + "commits"].as<std::string>());
    }
    opt.now_s = static_cast<std::int64_t>(std::time(nullptr));
}

} // namespace ringscale::analysis
