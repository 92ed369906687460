# Shared by the scripts of scripts/sim/ (sourced).
# The `seconds=` value of an app's result line (simulated time in a simulated run).
seconds() { sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' | tail -n 1; }
