"""The kernel times of compare.py's rows: the reference GPU's measured profiles of the round's
network, carried to every cluster of the mapping file by scale_profile.py's rule
(docs/design/published-validation.md, "Next round"), into OUTPUT/profiles/<cluster name>.csv.
"""

import os

import scale_profile
from compare_inputs import BadInput

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
H200 = os.path.join(REPO, "scenarios", "profiles", "h200")
# The reference of 2026-12-04: `tessera profile` of the v0.7 network and of DeepBench's training
# convolutions on one H200 (the GPU campaign's profile and microbatch steps).
DEFAULT_PROFILES = [os.path.join(H200, "mlperf-cosmoflow-profile.csv")]
DEFAULT_DEEPBENCH = os.path.join(H200, "deepbench-profile.csv")
DEFAULT_CLUSTER = os.path.join(H200, "this_machine.yaml")


def scale_for_clusters(clusters, profiles, deepbench, reference_cluster, out_dir):
    """Writes out_dir/<cluster name>.csv for each cluster file; returns out_dir. The reference's
    files are read once, whatever the number of clusters."""
    os.makedirs(out_dir, exist_ok=True)
    try:
        reference = scale_profile.Reference(profiles, deepbench, reference_cluster)
    except scale_profile.BadInput as e:
        raise BadInput(f"the reference profiles cannot be scaled to "
                       f"{', '.join(sorted(set(clusters)))}: {e}")
    for cluster in sorted(set(clusters)):
        name = os.path.splitext(os.path.basename(cluster))[0] + ".csv"
        try:
            scale_profile.write_scaled(reference, cluster, os.path.join(out_dir, name))
        except scale_profile.BadInput as e:
            raise BadInput(f"the reference profiles cannot be scaled to {cluster}: {e}")
    return out_dir
