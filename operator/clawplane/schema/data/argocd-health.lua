-- Argo CD health of a clawplane.dev resource, from the status the operator writes.
-- Generated into argocd-cm by `clawplane schema`; the same check serves every kind.
--   Accepted=False (a refused spec)              -> Degraded
--   a condition waiting with reason AwaitingApproval -> Suspended
--   ResolvedRefs=False (a missing reference or secret) -> Degraded
--   Ready=True for the current generation         -> Healthy
--   Ready=False, reason Disabled                  -> Suspended (switched off on purpose)
--   Ready=False after a failure (Crashed, Failed, Backoff, Paused, RefNotFound, Invalid,
--   ChildRejected, Conflict: a child the API server refused or a foreign object in its place) -> Degraded
--   ModelsDiscovered=False (a model provider that did not answer its probe) -> Degraded
--   anything else (no status yet, an older generation, Starting, Programmed=False) -> Progressing
local hs = {}
local failures = {
  Crashed = true, Failed = true, Backoff = true, Paused = true, RuntimeFailed = true,
  RefNotFound = true, SecretNotFound = true, Invalid = true, ChildRejected = true, Conflict = true,
}

local function find(conditions, wanted)
  for _, c in ipairs(conditions) do
    if c.type == wanted then return c end
  end
  return nil
end

local function text(c, fallback)
  if c ~= nil and c.message ~= nil and c.message ~= "" then return c.message end
  if c ~= nil and c.reason ~= nil and c.reason ~= "" then return c.reason end
  return fallback
end

if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for clawplane to reconcile"
  return hs
end

local conditions = obj.status.conditions
local generation = obj.metadata.generation or 0

local accepted = find(conditions, "Accepted")
if accepted ~= nil and accepted.status == "False" then
  hs.status = "Degraded"
  hs.message = text(accepted, "The spec was refused")
  if obj.status.message ~= nil and obj.status.message ~= "" then hs.message = obj.status.message end
  return hs
end

for _, c in ipairs(conditions) do
  if c.reason == "AwaitingApproval" and c.status ~= "True" then
    hs.status = "Suspended"
    hs.message = text(c, "Waiting for approval")
    return hs
  end
end

local ready = find(conditions, "Ready")
if ready == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Ready condition"
  return hs
end

local observed = ready.observedGeneration or obj.status.observedGeneration or 0
if observed < generation then
  hs.status = "Progressing"
  hs.message = "Generation " .. generation .. " is not reconciled yet (observed " .. observed .. ")"
  return hs
end

local refs = find(conditions, "ResolvedRefs")
if refs ~= nil and refs.status == "False" then
  hs.status = "Degraded"
  hs.message = text(refs, "A reference does not resolve")
  return hs
end

if ready.status == "True" then
  hs.status = "Healthy"
  hs.message = text(ready, "Ready")
  return hs
end

if ready.reason == "Disabled" then
  hs.status = "Suspended"
  hs.message = text(ready, "Disabled")
  return hs
end

local models = find(conditions, "ModelsDiscovered")
local programmed = find(conditions, "Programmed")
if (models ~= nil and models.status == "False") or failures[ready.reason] or (programmed ~= nil and programmed.status == "False" and failures[programmed.reason]) then
  hs.status = "Degraded"
  hs.message = text(ready, ready.reason)
  return hs
end

hs.status = "Progressing"
hs.message = text(ready, "Not ready yet")
return hs
