-- Runs the README's Neovim "Compare with source" example in headless Neovim (0.7+): starts the
-- server as the example does (declaring the client command), appends a snippet, waits for
-- the diagnostic, runs the "Compare with source" code action through the example's
-- handler, and writes what the split shows as JSON. Configured by RECITATION_NVIM_CONFIG.
local cfg = vim.fn.json_decode(os.getenv("RECITATION_NVIM_CONFIG"))
local result = { statuses = {} }

local function finish(err)
  result.error = err
  local f = io.open(cfg.out, "w")
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd("qall!")
end

local function run()
  dofile(cfg.example) -- the README's snippet: defines the command's handler
  vim.cmd("edit " .. vim.fn.fnameescape(cfg.file))
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].filetype = "python"
  local client_id = vim.lsp.start_client({
    name = "recitation",
    cmd = cfg.cmd,
    cmd_env = cfg.env,
    root_dir = cfg.root,
    workspace_folders = { { uri = vim.uri_from_fname(cfg.root), name = "workspace" } },
    init_options = { clientCommands = { "recitation.compareWithSource" }, recitation = { indexPath = cfg.index } },
    handlers = {
      ["recitation/status"] = function(_, params)
        table.insert(result.statuses, params)
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
  local answers = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = d.lnum, character = 0 }, ["end"] = { line = d.lnum, character = 0 } },
    context = { diagnostics = {} },
  }, 10000)
  local compare
  for _, r in pairs(answers or {}) do
    for _, action in ipairs(r.result or {}) do
      if action.title:find("^Compare with source") then
        compare = action
      end
    end
  end
  if not compare then
    return finish("no Compare with source code action")
  end
  result.action = compare.title
  -- what Neovim does when the code action is chosen: its command's client-side handler
  local handler = vim.lsp.commands[compare.command.command]
  if not handler then
    return finish("the example registers no handler for " .. compare.command.command)
  end
  local window = vim.api.nvim_get_current_win()
  handler(compare.command, { client_id = client_id, bufnr = buf })
  if not vim.wait(20000, function() return #vim.api.nvim_list_wins() > 1 end, 10) then
    return finish("no split opened")
  end
  local split = vim.api.nvim_get_current_win()
  local shown = vim.api.nvim_win_get_buf(split)
  result.split_is_new = split ~= window
  result.lines = vim.api.nvim_buf_get_lines(shown, 0, -1, false)
  result.name = vim.api.nvim_buf_get_name(shown)
  result.cursor = vim.api.nvim_win_get_cursor(split)
  result.modifiable = vim.bo[shown].modifiable
  result.filetype = vim.bo[shown].filetype
  local ns = vim.api.nvim_create_namespace("recitation")
  result.highlights = #vim.api.nvim_buf_get_extmarks(shown, ns, 0, -1, {})
  finish(vim.NIL)
end

local ok, err = pcall(run)
if not ok then
  finish(tostring(err))
end
