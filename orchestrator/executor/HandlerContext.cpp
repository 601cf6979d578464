// HandlerContext, Resource and the `%`-formatting of log templates (include/executor/HandlerContext.h). The
// rules enforced here are the reference's: change set once, non_compliant only with changes, unknown legacy
// states become failed with a warning, log text = template % kwargs.
#include "executor/HandlerContext.h"

#include "model/Ids.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace inm::executor {

namespace {
const Json kNull = nullptr;

std::string pyRepr(const Json& v) {
  if (v.is_string()) {
    std::string s = "'";
    for (char c : v.get<std::string>()) {
      if (c == '\'' || c == '\\') s += '\\';
      s += c;
    }
    return s + "'";
  }
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_null()) return "None";
  return v.dump();
}

std::string pyStr(const Json& v) { return v.is_string() ? v.get<std::string>() : pyRepr(v); }
} // namespace

Resource Resource::fromId(const std::string& versionedId, Json attributes) {
  Resource r;
  r.id = versionedId;
  size_t open = versionedId.find('[');
  size_t comma = open == std::string::npos ? std::string::npos : versionedId.find(',', open);
  if (open == std::string::npos || open == 0 || comma == std::string::npos ||
      versionedId.find("::") == std::string::npos || versionedId.find("::") > open)
    throw InvalidOperation("malformed resource id '" + versionedId +
                           "': expected <ns>::<type>[<agent>,<attr>=<value>]");
  r.type = versionedId.substr(0, open);
  // The agent ends at the first unescaped ',' (docs/artifact.md: '\' escapes in the agent part).
  std::string agent;
  size_t i = open + 1;
  for (; i < versionedId.size(); ++i) {
    char c = versionedId[i];
    if (c == '\\' && i + 1 < versionedId.size()) {
      agent += versionedId[++i];
      continue;
    }
    if (c == ',') break;
    agent += c;
  }
  r.agent = agent;
  if (auto split = model::splitResourceVersionId(versionedId)) r.version = split->version.value;
  r.attributes = attributes.is_object() ? std::move(attributes) : Json::object();
  return r;
}

std::string Resource::unversionedId() const { return std::string(model::withoutVersion(id)); }

const Json& Resource::get(const std::string& name) const {
  auto it = attributes.find(name);
  return it == attributes.end() ? kNull : *it;
}

bool Resource::purged() const {
  const Json& v = get("purged");
  return v.is_boolean() && v.get<bool>();
}

bool Resource::reportOnly() const {
  const Json& v = get("report_only");
  return v.is_boolean() && v.get<bool>();
}

model::DeployStatus deployStatus(ResourceState s) {
  switch (s) {
  case ResourceState::Deployed: return model::DeployStatus::Deployed;
  case ResourceState::Failed: return model::DeployStatus::Failed;
  case ResourceState::Skipped: return model::DeployStatus::Skipped;
  case ResourceState::SkippedForDependency: return model::DeployStatus::SkippedForDependency;
  case ResourceState::Unavailable: return model::DeployStatus::Unavailable;
  case ResourceState::NonCompliant: return model::DeployStatus::NonCompliant;
  case ResourceState::Dry: return model::DeployStatus::Dry;
  }
  return model::DeployStatus::Failed;
}

const char* stateName(ResourceState s) { return model::spelling(deployStatus(s)).data(); }

std::optional<ResourceState> parseState(const std::string& name) {
  for (ResourceState s : {ResourceState::Deployed, ResourceState::Failed, ResourceState::Skipped,
                          ResourceState::SkippedForDependency, ResourceState::Unavailable,
                          ResourceState::NonCompliant, ResourceState::Dry})
    if (name == stateName(s)) return s;
  return std::nullopt;
}

const char* changeName(Change c) { return model::spelling(c).data(); }

Json LogLine::toJson() const {
  return Json{
      {"level", level}, {"msg", msg}, {"args", Json::array()}, {"kwargs", kwargs}, {"timestamp", timestamp}};
}

std::string formatPercent(const std::string& tmpl, const Json& kwargs, bool* ok) {
  std::string out;
  bool good = true;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    char c = tmpl[i];
    if (c != '%') {
      out += c;
      continue;
    }
    if (i + 1 < tmpl.size() && tmpl[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    size_t close = tmpl.find(')', i);
    if (i + 1 >= tmpl.size() || tmpl[i + 1] != '(' || close == std::string::npos ||
        close + 1 >= tmpl.size()) {
      good = false;
      break;
    }
    std::string name = tmpl.substr(i + 2, close - i - 2);
    char conv = tmpl[close + 1];
    if (!kwargs.is_object() || !kwargs.contains(name)) {
      good = false;
      break;
    }
    const Json& v = kwargs[name];
    switch (conv) {
    case 's': out += pyStr(v); break;
    case 'r': out += pyRepr(v); break;
    case 'd':
    case 'i':
      if (!v.is_number()) {
        good = false;
        break;
      }
      out +=
          std::to_string(v.is_number_float() ? static_cast<long long>(v.get<double>()) : v.get<long long>());
      break;
    case 'f': {
      if (!v.is_number()) {
        good = false;
        break;
      }
      char buf[64];
      std::snprintf(buf, sizeof buf, "%f", v.get<double>());
      out += buf;
      break;
    }
    default: good = false;
    }
    if (!good) break;
    i = close + 1;
  }
  if (ok) *ok = good;
  return good ? out : tmpl;
}

std::string isoNow() {
  auto now = std::chrono::system_clock::now();
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lld+00:00", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(us % 1000000));
  return buf;
}

void HandlerContext::setResourceState(ResourceState s) {
  if (s == ResourceState::NonCompliant && changes_.empty())
    throw InvalidOperation("a resource can only be non_compliant when changes were recorded");
  status_ = s;
}

void HandlerContext::setStatus(const std::string& name) {
  auto s = parseState(name);
  if (!s || (*s == ResourceState::NonCompliant && changes_.empty())) {
    warning("invalid resource state %(state)s set by the handler; the resource is marked failed",
            {{"state", name}});
    status_ = ResourceState::Failed;
    return;
  }
  status_ = *s;
}

static void setOnce(Change& slot, Change value) {
  if (slot != Change::NoChange)
    throw InvalidOperation(std::string("the change of this action is already set to '") + changeName(slot) +
                           "'");
  slot = value;
}

void HandlerContext::setCreated() { setOnce(change_, Change::Created); }
void HandlerContext::setUpdated() { setOnce(change_, Change::Updated); }
void HandlerContext::setPurged() { setOnce(change_, Change::Purged); }

void HandlerContext::addChange(const std::string& name, Json desired, Json current) {
  changes_[name] = Json{{"current", std::move(current)}, {"desired", std::move(desired)}};
}

void HandlerContext::updateChanges(const Json& changes) {
  if (!changes.is_object()) throw InvalidOperation("changes must be an object {attribute: change}");
  for (auto& [name, v] : changes.items()) {
    if (v.is_object() && v.contains("current") && v.contains("desired"))
      addChange(name, v["desired"], v["current"]);
    else if (v.is_array() && v.size() == 2)
      addChange(name, v[1], v[0]);
    else
      throw InvalidOperation("change of '" + name + "' must be {current, desired} or [current, desired]");
  }
}

void HandlerContext::log(const std::string& level, const std::string& msg, Json kwargs) {
  if (!kwargs.is_object()) {
    logs_.push_back(
        LogLine{"WARNING", "log keyword arguments must be an object; ignored", Json::object(), isoNow()});
    kwargs = Json::object();
  }
  LogLine line;
  line.level = level;
  line.msg = formatPercent(msg, kwargs);
  line.kwargs = std::move(kwargs);
  line.timestamp = isoNow();
  logs_.push_back(std::move(line));
}

void HandlerContext::exception(const std::string& msg, const std::string& traceback, Json kwargs) {
  if (!kwargs.is_object()) kwargs = Json::object();
  kwargs["traceback"] = traceback;
  log("ERROR", msg, std::move(kwargs));
}

void HandlerContext::setFact(const std::string& name, const std::string& value, bool expires) {
  facts_[name] = Json{{"value", value}, {"expires", expires}};
}

const Json& HandlerContext::get(const std::string& key) const {
  auto it = scratch_.find(key);
  return it == scratch_.end() ? kNull : it->second;
}

} // namespace inm::executor
