-- Headless Neovim against `trllint server`: the diagnostic appears and a code action fixes it.
--   nvim --headless -u NONE -c "luafile tests/editor/nvim_check.lua" path/to/train.py
-- TRLLINT (environment) names the trllint executable (default: trllint on PATH). Not run in CI:
-- it needs Neovim (apt-get install neovim). Exits 0 when both happened, 1 otherwise.
local function say(...) io.stdout:write(string.format(...) .. "\n") end
local function fail(message) say("FAIL: %s", message); vim.cmd("cquit 1") end

vim.cmd("filetype on")
local buf = vim.api.nvim_get_current_buf()
local file = vim.api.nvim_buf_get_name(buf)
local config = {
  name = "trllint",
  cmd = { os.getenv("TRLLINT") or "trllint", "server" },
  root_dir = vim.fn.fnamemodify(file, ":h"),
}
-- The README's setup: vim.lsp.start on Neovim 0.8+; 0.7 (Debian 12's) spells it in two calls.
if vim.lsp.start then
  vim.lsp.start(config)
else
  local client = vim.lsp.start_client(config)
  vim.lsp.buf_attach_client(buf, client)
end
say("neovim %s, %s", tostring(vim.version().major) .. "." .. vim.version().minor .. "." .. vim.version().patch, file)

if not vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 50) then
  fail("no diagnostic within 60 s")
end
local diagnostics = vim.diagnostic.get(buf)
for _, d in ipairs(diagnostics) do
  say("diagnostic %s:%d:%d %s: %s", vim.fn.fnamemodify(file, ":t"), d.lnum + 1, d.col + 1, d.source or "?", d.message)
end

local first = diagnostics[1]
local params = vim.lsp.util.make_range_params()
params.range = {
  start = { line = first.lnum, character = first.col },
  ["end"] = { line = first.end_lnum or first.lnum, character = first.end_col or first.col },
}
-- The diagnostic, rebuilt: 0.7 keeps only part of what the server sent (user_data.lsp has no
-- range), and an empty Lua table would go out as a JSON object, not a list.
params.context = { diagnostics = { { range = params.range, message = first.message, source = first.source } } }
local replies = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, 30000) or {}
local chosen
for _, reply in pairs(replies) do
  for _, action in ipairs(reply.result or {}) do
    say("code action: %s%s", action.title, action.isPreferred and " (preferred)" or "")
    if action.isPreferred and not chosen then chosen = action end
  end
end
if not chosen then fail("no preferred code action") end
vim.lsp.util.apply_workspace_edit(chosen.edit, "utf-16")
say("line %d after the fix: %s", first.lnum + 1, vim.api.nvim_buf_get_lines(buf, first.lnum, first.lnum + 1, false)[1])

-- the edit is sent to the server as a didChange: the fixed finding goes
if not vim.wait(60000, function() return #vim.diagnostic.get(buf) == #diagnostics - 1 end, 50) then
  fail("the diagnostic did not go after the fix")
end
say("diagnostics after the fix: %d (were %d)", #vim.diagnostic.get(buf), #diagnostics)
say("OK")
vim.cmd("qall!")
