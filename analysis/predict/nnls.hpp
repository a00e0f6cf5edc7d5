// Non-negative least squares for the calibration's linear cost models (time = x . c, c >= 0):
// on weighted squares, and refined on the log of measured / predicted.
#pragma once

#include <vector>

namespace ringscale::analysis::predict {

/// Non-negative least squares by enumerating active sets (at most 8 columns): minimise
/// sum_i (w_i (x_i . c - y_i))^2 subject to c >= 0. A column that is zero in every row is
/// not identified and gets NaN.
std::vector<double> nnls(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                         const std::vector<double>& w);

/// From `start` (an nnls fit), minimise sum_i |log(y_i / x_i . c)| subject to c >= 0 by
/// reweighted Gauss-Newton steps of nnls, halved while the sum grows. Relative error
/// (w = 1 / y) is lopsided where the data are not exactly linear: predicting 0 costs at most
/// 100% a row while predicting 30x too much costs 2900%, so one fast row (a shaper's burst, a
/// message that fits a socket buffer) pulls the fit to predict every larger row far too fast;
/// a log ratio costs the same either way, and absolute values let the rows that agree decide.
/// `start` comes back where a row predicts no time.
std::vector<double> nnls_log(const std::vector<std::vector<double>>& x,
                             const std::vector<double>& y, const std::vector<double>& start);

} // namespace ringscale::analysis::predict
