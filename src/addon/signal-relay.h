// The signals Node cannot listen to, or cannot tell the sender of (signal-relay.c): defined on the addon's exports by
// addon.c's init.
#ifndef BATON_SIGNAL_RELAY_H
#define BATON_SIGNAL_RELAY_H
#include <node_api.h>

void define_signal_relay(napi_env env, napi_value exports);

#endif
