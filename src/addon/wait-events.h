// The waits' half of the addon (wait-events.c): defined on the addon's exports by addon.c's init.
#ifndef BATON_WAIT_EVENTS_H
#define BATON_WAIT_EVENTS_H
#include <node_api.h>

void define_wait_functions(napi_env env, napi_value exports);
// liveness.c: the liveness file's lock, made and looked at.
void define_liveness_functions(napi_env env, napi_value exports);

#endif
