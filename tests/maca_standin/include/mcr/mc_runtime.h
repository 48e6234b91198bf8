/* Stand-in for the MetaX MACA SDK's <mcr/mc_runtime.h>, for testing kernelsmith's MACA backend plugin
   without the SDK (tests/maca_standin/README.md). Never installed.

   It declares the subset of the MACA runtime the plugin uses, by the SDK's names. The numeric values
   are our own and deliberately differ from CUDA's (and from any guess at MetaX's): the plugin must use
   the names only, and a value hard-coded into it breaks the stand-in tests. */
#pragma once

#include "mcr/mc_runtime_api.h"
