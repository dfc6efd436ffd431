#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bench.hpp"

namespace cuview::bench {

namespace {
double at(const std::vector<double>& sorted, double q) {
  const auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size() - 1)));
  return sorted[std::min(i, sorted.size() - 1)];
}
}  // namespace

Dist latency_dist(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  return {at(v, 0.5), at(v, 0.99), v.size()};
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return at(v, q);
}

Dist rate_dist(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  return {at(v, 0.5), v[static_cast<std::size_t>(0.01 * static_cast<double>(v.size() - 1))], v.size()};
}

std::string fmt(double v, const char* f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string sci(double v) {
  if (v == 0 || !std::isfinite(v)) return fmt(v);
  static const char* const kSup[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
  int e = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  const double m = v / std::pow(10.0, e);
  std::string exp;
  for (char c : std::to_string(e)) exp += c == '-' ? "⁻" : kSup[c - '0'];
  return fmt(m, "%.2f") + " × 10" + exp;
}

std::string Table::markdown() const {
  std::ostringstream md;
  md << "|";
  for (const auto& h : head) md << " " << h << " |";
  md << "\n|";
  for (std::size_t i = 0; i < head.size(); ++i) md << " --- |";
  md << "\n";
  for (const auto& r : rows) {
    md << "|";
    for (const auto& c : r) md << " " << c << " |";
    md << "\n";
  }
  return md.str();
}

bool Options::wants(const std::string& s) const {
  return std::find(sections.begin(), sections.end(), s) != sections.end();
}

std::map<std::string, double> parse_fields(const std::string& text, const std::string& prefix) {
  std::map<std::string, double> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix + " ", 0) != 0) continue;
    std::istringstream words(line.substr(prefix.size()));
    for (std::string w; words >> w;) {
      const auto eq = w.find('=');
      if (eq == std::string::npos) continue;
      try {
        out[w.substr(0, eq)] = std::stod(w.substr(eq + 1));
      } catch (const std::exception&) {
      }
    }
  }
  return out;
}

}  // namespace cuview::bench
