#pragma once
#include <string>

namespace tt::log {
// tt-metal's logger line: "2025-12-16 13:55:34.215 | info     |           Metal | text (file:line)"
void line(const char* level, const char* component, const std::string& text, const char* where, int lineno);
}  // namespace tt::log

#define TT_LOG_INFO(component, text) ::tt::log::line("info", component, text, __FILE__, __LINE__)
#define TT_LOG_CRITICAL(text) ::tt::log::line("critical", "Always", text, __FILE__, __LINE__)
#define TT_LOG_WARNING(component, text) ::tt::log::line("warning", component, text, __FILE__, __LINE__)
