// NAS MG (NPB 3.x): a V-cycle multigrid solving the periodic 3-D Poisson problem A u = v on a
// hierarchy of grids, n^3 down to 2^3 points, from NPB's random charges (zran3). resid and psinv
// are 27-point Box stencils with one coefficient per class (centre, faces, edges, corners),
// rprj3 a tessera::Restriction, interp a tessera::Prolongation, comm3 the periodic ghost
// exchange Tessera does before each, norm2u3 a task per top tile (PlaneNorms). Every formula keeps
// NPB's grouping of the sums (its u1/u2 partial sums), so the results follow NPB's reference.
// Every task has a CUDA body too, so MG runs with GPU workers only (docs/gpu.md). The code is
// split by concern: verification.hpp (classes, charges, norms), operators.hpp (the point
// functors and their row loops), slab.hpp (the slab tasks), coarse_cycle.hpp (the one-task
// levels), gpu.hpp (the CUDA bodies' kernel), levels.hpp (the hierarchy and the V-cycle).
#pragma once

#include "apps/mg/levels.hpp"
