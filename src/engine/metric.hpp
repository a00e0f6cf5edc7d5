// What a job reports about a case for people to read: typed values with a unit and a hint
// of how to render them. Jobs measure and return metrics; reporters (the launcher's live
// table) present them, so no job formats a cell or sizes a column.
#pragma once

#include <limits>
#include <string>

namespace ringscale::jobs {

/// How a reporter renders a metric's value.
enum class metric_hint {
    text,   ///< `text` as is: an operation, a layout, a variant
    count,  ///< a whole number
    size,   ///< a whole number with a binary suffix, as typed on the command line: 4K
    number, ///< a real number
    rate,   ///< an amount per second, already in `unit`: GB/s, tok/s, GF/s/rank
    bytes,  ///< a byte count, shown with a binary unit: 1.50 MiB
    time,   ///< seconds
    error,  ///< an error's magnitude, shown in scientific notation
};

/// One reported value of one case.
struct metric {
    std::string name; ///< what it is: "busbw", "seq", "sent/rank"; "" when `unit` says it
    double value = std::numeric_limits<double>::quiet_NaN(); ///< NaN: not known ("-")
    std::string unit; ///< "GB/s", "B", "tok/s"; bytes and time carry their own
    metric_hint hint = metric_hint::number;
    std::string text; ///< the value of a text metric ("" with another hint)

    /// A text metric.
    static metric of_text(std::string name, std::string text) {
        metric m;
        m.name = std::move(name);
        m.hint = metric_hint::text;
        m.text = std::move(text);
        return m;
    }
    /// A numeric metric; NaN when not known for this case.
    static metric of(std::string name, double value, std::string unit, metric_hint hint) {
        metric m;
        m.name = std::move(name);
        m.value = value;
        m.unit = std::move(unit);
        m.hint = hint;
        return m;
    }
};

} // namespace ringscale::jobs
