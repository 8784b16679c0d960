-- memskip.lua - memlimit_skipped (e2e_memlimit skipped): a policy that answers cuMemAlloc_v2 and cuMemFree_v2
-- itself with success - no memory allocated or freed - behind memlimit (which charges in its pre hook): the
-- quota must not charge what was never allocated, nor record the output the policy left untouched.
cushim.before.cuMemAlloc_v2 = function(call)
  return cushim.skip("CUDA_SUCCESS")
end
cushim.before.cuMemFree_v2 = function(call)
  return cushim.skip("CUDA_SUCCESS")
end
