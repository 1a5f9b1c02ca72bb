// Why a figure of the package is worse than in the reference run (results/reference.json)
// by more than 5 %, keyed "workload / contestant / figure" as the report prints them. A
// figure worse without an entry here is flagged in the report.
export const WORSE_BECAUSE = {};
