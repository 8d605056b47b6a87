#!/bin/sh
# The adapter VS Code starts for "type": "ndb" without debugServer: ndb dap
# on stdio (no token needed). Set NDB to the ndb binary if it is not on PATH.
exec "${NDB:-ndb}" dap "$@"
