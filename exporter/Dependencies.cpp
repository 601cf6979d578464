// dir_before_file, graph normalisation and cycle detection (iterative Tarjan, then a BFS inside each
// cyclic component for a shortest cycle through its smallest node). Pure functions over numbers; the
// exporter feeds them resources in artifact order. Invariant: no recursion (100k-long chains are fine).
#include "exporter/Dependencies.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringMap.h>

#include <algorithm>
#include <deque>

namespace inm::exporter {

void dirBeforeFile(llvm::ArrayRef<PathResource> resources,
                   std::vector<std::pair<uint32_t, uint32_t>>& edges) {
  // host -> directory path -> directories with exactly that path
  llvm::DenseMap<uint32_t, llvm::StringMap<llvm::SmallVector<uint32_t, 1>>> dirs;
  for (uint32_t i = 0; i < resources.size(); ++i)
    if (resources[i].isDirectory) dirs[resources[i].host][resources[i].path].push_back(i);
  if (dirs.empty()) return;
  for (uint32_t i = 0; i < resources.size(); ++i) {
    auto host = dirs.find(resources[i].host);
    if (host == dirs.end()) continue;
    llvm::StringRef path = resources[i].path;
    // Every prefix, the empty one and the whole path included (Python's startswith semantics).
    for (size_t k = 0; k <= path.size(); ++k) {
      auto hit = host->second.find(path.substr(0, k));
      if (hit == host->second.end()) continue;
      for (uint32_t d : hit->second)
        if (d != i) edges.emplace_back(i, d);
    }
  }
}

void normalizeGraph(Graph& graph) {
  for (auto& adj : graph) {
    std::sort(adj.begin(), adj.end());
    adj.erase(std::unique(adj.begin(), adj.end()), adj.end());
  }
}

namespace {

/// Tarjan's strongly connected components without recursion; comp[i] = component number.
std::vector<uint32_t> components(const Graph& graph, uint32_t& count) {
  const uint32_t n = uint32_t(graph.size());
  constexpr uint32_t kUnvisited = UINT32_MAX;
  std::vector<uint32_t> index(n, kUnvisited), low(n, 0), comp(n, kUnvisited);
  std::vector<uint8_t> onStack(n, 0);
  std::vector<uint32_t> stack;
  struct Frame {
    uint32_t node;
    uint32_t next;
  };
  std::vector<Frame> frames;
  uint32_t counter = 0;
  count = 0;
  for (uint32_t root = 0; root < n; ++root) {
    if (index[root] != kUnvisited) continue;
    frames.push_back({root, 0});
    index[root] = low[root] = counter++;
    stack.push_back(root);
    onStack[root] = 1;
    while (!frames.empty()) {
      Frame& f = frames.back();
      const auto& adj = graph[f.node];
      if (f.next < adj.size()) {
        uint32_t w = adj[f.next++];
        if (index[w] == kUnvisited) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          onStack[w] = 1;
          frames.push_back({w, 0});
        } else if (onStack[w]) {
          low[f.node] = std::min(low[f.node], index[w]);
        }
        continue;
      }
      uint32_t v = f.node;
      frames.pop_back();
      if (!frames.empty()) low[frames.back().node] = std::min(low[frames.back().node], low[v]);
      if (low[v] == index[v]) {
        while (true) {
          uint32_t w = stack.back();
          stack.pop_back();
          onStack[w] = 0;
          comp[w] = count;
          if (w == v) break;
        }
        ++count;
      }
    }
  }
  return comp;
}

} // namespace

std::vector<std::vector<uint32_t>> findCycles(const Graph& graph) {
  const uint32_t n = uint32_t(graph.size());
  uint32_t count = 0;
  std::vector<uint32_t> comp = components(graph, count);
  std::vector<uint32_t> size(count, 0), smallest(count, UINT32_MAX);
  std::vector<uint8_t> selfLoop(count, 0);
  for (uint32_t i = 0; i < n; ++i) {
    ++size[comp[i]];
    smallest[comp[i]] = std::min(smallest[comp[i]], i);
    if (std::binary_search(graph[i].begin(), graph[i].end(), i)) selfLoop[comp[i]] = 1;
  }
  std::vector<uint32_t> starts;
  for (uint32_t c = 0; c < count; ++c)
    if (size[c] > 1 || selfLoop[c]) starts.push_back(smallest[c]);
  std::sort(starts.begin(), starts.end());

  std::vector<std::vector<uint32_t>> cycles;
  std::vector<uint32_t> parent(n, UINT32_MAX);
  std::vector<uint32_t> touched;
  for (uint32_t s : starts) {
    if (std::binary_search(graph[s].begin(), graph[s].end(), s)) {
      cycles.push_back({s});
      continue;
    }
    // BFS from s inside its component until an edge leads back to s.
    uint32_t c = comp[s];
    std::deque<uint32_t> queue{s};
    parent[s] = s;
    touched.push_back(s);
    uint32_t last = UINT32_MAX;
    while (!queue.empty() && last == UINT32_MAX) {
      uint32_t v = queue.front();
      queue.pop_front();
      for (uint32_t w : graph[v]) {
        if (comp[w] != c) continue;
        if (w == s) {
          last = v;
          break;
        }
        if (parent[w] != UINT32_MAX) continue;
        parent[w] = v;
        touched.push_back(w);
        queue.push_back(w);
      }
    }
    std::vector<uint32_t> cycle;
    for (uint32_t v = last; v != s; v = parent[v]) cycle.push_back(v);
    cycle.push_back(s);
    std::reverse(cycle.begin(), cycle.end());
    cycles.push_back(std::move(cycle));
    for (uint32_t t : touched) parent[t] = UINT32_MAX;
    touched.clear();
  }
  return cycles;
}

} // namespace inm::exporter
