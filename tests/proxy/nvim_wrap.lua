-- Drives `recitation-server --wrap -- pylsp` from headless Neovim (0.7+): asks pylsp's
-- completion and hover through the proxy, then appends quoted code and waits for
-- Recitation's diagnostic. Writes what it saw as JSON. Configured through the
-- RECITATION_NVIM_CONFIG environment variable.
local cfg = vim.fn.json_decode(os.getenv("RECITATION_NVIM_CONFIG"))
local result = { labels = {}, sources = {} }

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
    name = "recitation-wrap",
    cmd = cfg.cmd,
    cmd_env = cfg.env,
    root_dir = cfg.root,
    workspace_folders = { { uri = vim.uri_from_fname(cfg.root), name = "workspace" } },
    init_options = { recitation = { indexPath = cfg.index } },
  })
  if not client_id then
    return finish("the server did not start")
  end
  vim.lsp.buf_attach_client(buf, client_id)
  if not vim.wait(30000, function()
    local c = vim.lsp.get_client_by_id(client_id)
    return c ~= nil and c.initialized
  end, 10) then
    return finish("not initialized")
  end

  local uri = vim.uri_from_bufnr(buf)
  local completion = vim.lsp.buf_request_sync(buf, "textDocument/completion", {
    textDocument = { uri = uri },
    position = cfg.completion_at,
  }, 20000)
  for _, r in pairs(completion or {}) do
    local items = r.result and (r.result.items or r.result) or {}
    for _, item in ipairs(items) do
      table.insert(result.labels, item.label)
    end
  end

  local hover = vim.lsp.buf_request_sync(buf, "textDocument/hover", {
    textDocument = { uri = uri },
    position = cfg.hover_at,
  }, 20000)
  for _, r in pairs(hover or {}) do
    if r.result then
      result.hover = vim.fn.json_encode(r.result.contents)
    end
  end

  vim.api.nvim_buf_set_lines(buf, -1, -1, false, vim.split(cfg.snippet, "\n", { plain = true }))
  if not vim.wait(30000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.source == "recitation" then
        return true
      end
    end
    return false
  end, 10) then
    return finish("no recitation diagnostic")
  end
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(result.sources, d.source or "")
    if d.source == "recitation" then
      result.message = d.message
    end
  end

  vim.lsp.stop_client(client_id)
  vim.wait(10000, function() return vim.lsp.client_is_stopped(client_id) end, 10)
  finish(vim.NIL)
end

local ok, err = pcall(run)
if not ok then
  finish(tostring(err))
end
