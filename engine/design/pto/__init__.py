"""PTO: a workload-driven predictive table optimizer (Meduri et al., SIGMOD 2026, seed 002).

The modules follow the paper's pipeline (our readings of its open points are noted where they apply):

* :mod:`.data`: the table's predicated columns in memory, fragments as encoded boxes;
* :mod:`.stats`: filter-column frequency, selectivity, NDV (section 3.1);
* :mod:`.goodturing`: the average distinct sort-cluster size, Algorithm 2;
* :mod:`.candidates`: partition columns (3.2.2), sort schemes (Algorithm 1), TFS/RGS (3.2.5);
* :mod:`.features`: the feature vector of Figure 4 (17 + 2T dimensions);
* :mod:`.labels`: skipping benefit on a downscaled in-memory sample, Algorithm 3;
* :mod:`.model`: gradient-boosted trees on the 12 training layouts and the choice;
* :mod:`.expert`: the human-expert heuristic, Algorithm 4;
* :mod:`.optimizer`: the whole run (and the lightweight variant);
* :mod:`.baselines`: the default layout, the human expert and exhaustive search, measured alike.
"""
