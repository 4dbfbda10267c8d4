-- Drives Recitation's language server from headless Neovim (0.7+): opens a file, appends a
-- snippet, waits for the diagnostic, asks for the hover and the code actions, and writes
-- what it saw as JSON. Configured through the RECITATION_NVIM_CONFIG environment variable.
local cfg = vim.fn.json_decode(os.getenv("RECITATION_NVIM_CONFIG"))
local result = { statuses = {}, matches = {} }

local function finish(err)
  result.error = err
  local f = io.open(cfg.out, "w")
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd("qall!")
end

local function run()
  vim.cmd("edit " .. vim.fn.fnameescape(cfg.file))
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].filetype = "python"

  local client_id = vim.lsp.start_client({
    name = "recitation",
    cmd = cfg.cmd,
    cmd_env = cfg.env,
    root_dir = cfg.root,
    workspace_folders = { { uri = vim.uri_from_fname(cfg.root), name = "workspace" } },
    init_options = { recitation = { indexPath = cfg.index } },
    handlers = {
      ["recitation/status"] = function(_, params)
        table.insert(result.statuses, params)
      end,
      ["recitation/match"] = function(_, params)
        table.insert(result.matches, params)
      end,
    },
  })
  if not client_id then
    return finish("the server did not start")
  end
  vim.lsp.buf_attach_client(buf, client_id)

  if not vim.wait(20000, function() return #result.statuses > 0 end, 10) then
    return finish("no recitation/status")
  end

  vim.api.nvim_buf_set_lines(buf, -1, -1, false, vim.split(cfg.snippet, "\n", { plain = true }))
  if not vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 10) then
    return finish("no diagnostic")
  end
  local d = vim.diagnostic.get(buf)[1]
  result.diagnostic = {
    lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
    message = d.message, source = d.source, severity = d.severity,
  }

  local uri = vim.uri_from_bufnr(buf)
  local hover = vim.lsp.buf_request_sync(buf, "textDocument/hover", {
    textDocument = { uri = uri },
    position = { line = d.lnum + 2, character = 4 },
  }, 10000)
  for _, r in pairs(hover or {}) do
    if r.result then
      result.hover = r.result.contents.value
    end
  end

  local actions = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", {
    textDocument = { uri = uri },
    range = {
      start = { line = d.lnum, character = d.col },
      ["end"] = { line = d.end_lnum, character = d.end_col },
    },
    context = { diagnostics = {} },
  }, 10000)
  result.actions = {}
  for _, r in pairs(actions or {}) do
    for _, a in ipairs(r.result or {}) do
      table.insert(result.actions, a.title)
    end
  end

  vim.lsp.stop_client(client_id)
  vim.wait(5000, function() return vim.lsp.client_is_stopped(client_id) end, 10)
  finish(vim.NIL)
end

local ok, err = pcall(run)
if not ok then
  finish(tostring(err))
end
