// Lets the Runtime release the StarPU handles of fields that outlive it.
#pragma once

#include "tessera/detail/field_storage.hpp"

namespace tessera::detail {
void release_field(FieldStorage& field);
}
