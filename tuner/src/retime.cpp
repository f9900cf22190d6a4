#include "kiln/tuner/retime.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kiln/tuner/search.hpp"

namespace kiln {
namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// Standard error of a sample median from its MAD (as in choose_winner): sigma ~ 1.4826 MAD, the
// median's standard error ~ 1.2533 sigma / sqrt(n).
double median_standard_error(const std::vector<double>& v, double median) {
  if (v.empty()) return 0.0;
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - median));
  return 1.4826 * 1.2533 * median_of(std::move(dev)) / std::sqrt(static_cast<double>(v.size()));
}

std::string fmt_percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * fraction);
  return buf;
}

}  // namespace

int balanced_retime_rounds(int requested) {
  const int r = std::max(2, requested);
  return r + (r % 2);
}

std::vector<std::size_t> retime_order(std::size_t k, int round) {
  std::vector<std::size_t> order(k);
  if (k == 0) return order;
  const std::size_t start = static_cast<std::size_t>(std::max(0, round) / 2) % k;
  for (std::size_t j = 0; j < k; ++j) order[j] = (start + j) % k;
  if (round % 2) std::reverse(order.begin(), order.end());
  return order;
}

bool preferred_finalist(const Candidate& a, const Candidate& b) {
  const int pa = a.variant ? a.variant->priority() : 0;
  const int pb = b.variant ? b.variant->priority() : 0;
  if (pa != pb) return pa > pb;
  if (a.variant == b.variant && a.is_default != b.is_default) return a.is_default;
  return preferred_on_tie(a, b);
}

std::vector<std::size_t> default_finalists(const std::vector<CandidateResult>& ranked, std::size_t k, double reach) {
  std::vector<std::size_t> out;
  const std::size_t top = std::min(k, ranked.size());
  for (std::size_t i = 0; i < top; ++i) out.push_back(i);
  if (top == 0) return out;
  const double limit = reach * ranked.front().timing.median_us;
  for (std::size_t i = 0; i < top; ++i) {
    const Variant* v = ranked[i].candidate.variant;
    bool have = false;
    for (std::size_t j : out) have |= ranked[j].candidate.variant == v && ranked[j].candidate.is_default;
    if (have) continue;
    for (std::size_t j = top; j < ranked.size(); ++j)
      if (ranked[j].candidate.variant == v && ranked[j].candidate.is_default) {
        if (ranked[j].timing.median_us <= limit) out.push_back(j);
        break;
      }
  }
  return out;
}

std::size_t choose_winner_paired(const std::vector<CandidateResult>& timed, const RoundSamples& round_samples,
                                 double tie_fraction, std::string* note) {
  const std::size_t k = timed.size();
  if (k == 0) return 0;
  const std::size_t rounds = round_samples.empty() ? 0 : round_samples.front().size();
  bool complete = round_samples.size() == k;
  for (const auto& f : round_samples) {
    complete = complete && f.size() == rounds;
    for (const auto& r : f) complete = complete && !r.empty();
  }
  const std::size_t pairs = rounds / 2;
  if (!complete || pairs < 2) return choose_winner(timed, tie_fraction, note);

  // Round medians, and each finalist's sample noise: the standard error of its overall median
  // relative to it, with sigma from the samples' deviations from their own round's mean (drift
  // between rounds does not count as noise; sqrt(n / (n - 1)) undoes the mean's share of them).
  // With one sample per round, the pooled samples' MAD instead.
  std::vector<std::vector<double>> med(k, std::vector<double>(rounds));
  std::vector<double> rel_se(k, 0.0);
  for (std::size_t f = 0; f < k; ++f) {
    std::vector<double> dev;
    std::size_t total = 0;
    double correction = 1.0;
    for (std::size_t r = 0; r < rounds; ++r) {
      const std::vector<double>& xs = round_samples[f][r];
      med[f][r] = median_of(xs);
      total += xs.size();
      if (xs.size() < 2) continue;
      double mean = 0.0;
      for (double x : xs) mean += x;
      mean /= static_cast<double>(xs.size());
      for (double x : xs) dev.push_back(mean > 0.0 ? std::fabs(x / mean - 1.0) : 0.0);
      correction = std::sqrt(static_cast<double>(xs.size()) / static_cast<double>(xs.size() - 1));
    }
    const double pooled = timed[f].timing.median_us > 0.0 ? timed[f].timing.mad_us / timed[f].timing.median_us : 0.0;
    const double mad = dev.empty() ? pooled : median_of(std::move(dev)) * correction;
    rel_se[f] = 1.4826 * 1.2533 * mad / std::sqrt(static_cast<double>(std::max<std::size_t>(1, total)));
  }

  // Finalist f against finalist ref, one value per pair of rounds: the mean of the two rounds'
  // ratios of medians.  The pair ran forward then backward, so a drift that is linear over the
  // pair shifts the two ratios by opposite amounts and the mean cancels it.
  auto ratios_to = [&](std::size_t f, std::size_t ref) {
    std::vector<double> q;
    for (std::size_t p = 0; p < pairs; ++p) {
      double sum = 0.0;
      for (std::size_t r = 2 * p; r < 2 * p + 2; ++r) sum += med[ref][r] > 0.0 ? med[f][r] / med[ref][r] : 1.0;
      q.push_back(sum / 2.0);
    }
    return q;
  };
  std::vector<double> speed(k);
  for (std::size_t f = 0; f < k; ++f) speed[f] = median_of(ratios_to(f, 0));
  std::size_t fastest = 0;
  for (std::size_t f = 1; f < k; ++f)
    if (speed[f] < speed[fastest] || (speed[f] == speed[fastest] && preferred_finalist(timed[f].candidate, timed[fastest].candidate)))
      fastest = f;

  std::vector<std::size_t> tied;
  std::vector<double> slower(k, 0.0);  // median over rounds of (f / fastest - 1)
  for (std::size_t f = 0; f < k; ++f) {
    if (f == fastest) {
      tied.push_back(f);
      continue;
    }
    std::vector<double> d = ratios_to(f, fastest);
    for (double& x : d) x -= 1.0;
    slower[f] = median_of(d);
    // Three standard errors, the larger of the samples' and the pairs' own spread; at least
    // tie_fraction.
    const double se_samples = std::sqrt(rel_se[f] * rel_se[f] + rel_se[fastest] * rel_se[fastest]);
    const double noise = std::max({3.0 * se_samples, 3.0 * median_standard_error(d, slower[f]), tie_fraction});
    if (slower[f] <= noise) tied.push_back(f);
  }
  std::size_t winner = tied.front();
  for (std::size_t f : tied)
    if (preferred_finalist(timed[f].candidate, timed[winner].candidate)) winner = f;
  if (note) {
    const std::string paired = " (compared within " + std::to_string(pairs) + " pairs of rounds)";
    if (tied.size() == 1) {
      *note = "fastest finalist, clear of the others' noise" + paired;
    } else {
      std::string names;
      for (std::size_t f : tied)
        if (f != winner) names += (names.empty() ? "" : ", ") + timed[f].candidate.to_string();
      if (winner == fastest)
        *note = "fastest; within the measured noise of " + names +
                ", and the tie rule (higher priority, then the variant's default, then smaller config) agrees" + paired;
      else
        *note = "within the measured noise of the fastest (" + timed[fastest].candidate.to_string() + ", " +
                fmt_percent(slower[winner]) + " faster); chosen over " + names +
                " by the tie rule (higher priority, then the variant's default, then smaller config)" + paired;
    }
  }
  return winner;
}

}  // namespace kiln
