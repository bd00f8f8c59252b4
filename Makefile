# rankbench: every target runs from a fresh clone with nothing but Python 3.11.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
DATA   ?= $(if $(RANKBENCH_DATA),$(RANKBENCH_DATA),$(if $(wildcard ../shared/datasets),../shared/datasets,datasets))
JOBS   ?= 2
PAPERS := prosser yuli sharaf merler yan
# run after a paper's configs, inside its recipe: $$runs holds the run folders it wrote
AFTER_merler = $(BIN)/rankbench figures merler $$runs --out results/merler/figures
AFTER_yan = $(BIN)/rankbench figures yan $$runs --out results/yan/figures
AFTER_yuli = $(BIN)/rankbench figures yuli $$runs --out results/yuli/figures
# every run folder of a paper already under results/ (for its figures alone)
runs_of = $$(for d in results/$(1)/*/; do [ -f $$d/config.yaml ] && echo $$d; done)

.PHONY: install quickstart run test regress reproduce-all yuli-figures yan-figures merler-figures $(addprefix reproduce-,$(PAPERS)) $(addprefix report-,$(PAPERS)) bench bench-quick demo-dask docs clean

$(BIN)/rankbench: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,peers]'
	@touch $@

install: $(BIN)/rankbench  ## create .venv and install rankbench with its test extras and the peers

quickstart: install  ## run the embedded synthetic re-identification example
	$(BIN)/rankbench run configs/quickstart.yaml
	@echo
	@echo "next: 'source $(VENV)/bin/activate' puts rankbench on your PATH (or use $(BIN)/rankbench, or"
	@echo "      'make run CONFIG=configs/<paper>/<name>.yaml ARGS=\"--trials 3\"'); then e.g."
	@echo "      rankbench report results/quickstart/latest --latex"
	@echo "      rankbench compare results/quickstart/latest --methods Bhattacharyya L1-norm"

run: install  ## one config: make run CONFIG=configs/yuli/umist_table3_K.yaml [ARGS="--trials 3 --set k=v"]
	@[ -n "$(CONFIG)" ] || { echo "usage: make run CONFIG=configs/<paper>/<name>.yaml [ARGS=\"--trials 3\"]"; exit 2; }
	$(BIN)/rankbench run $(CONFIG) --data-root $(DATA) --jobs $(JOBS) $(ARGS)

test: install  ## the whole test suite (real-data tests skip when ../shared/datasets is absent)
	$(BIN)/python -m pytest -q

# CI's regression of published numbers: every config with a regress: block, reduced, then checked.
regress: install
	@set -e; fails=0; runs=""; mkdir -p results/regress; \
	for cfg in $$(grep -lx 'regress:' configs/*/*.yaml); do \
	  name=$$(basename $$cfg .yaml); out=results/regress/$$(basename $$(dirname $$cfg))-$$name; \
	  rm -rf $$out; echo "== $$cfg"; \
	  $(BIN)/rankbench run $$cfg --regress --data-root $(DATA) --jobs $(JOBS) --out $$out --quiet > $$out.log 2>&1 \
	    || { echo "run failed:"; tail -5 $$out.log; fails=$$((fails+1)); continue; }; \
	  runs="$$runs $$out"; \
	  $(BIN)/rankbench check $$out || fails=$$((fails+1)); \
	done; \
	[ -z "$$runs" ] || $(BIN)/rankbench collect $$runs --out results/regress/REPORT.md; \
	echo "regress: $$fails config(s) failed"; [ $$fails -eq 0 ]

# one config (reproduce/<paper>/<name>): its earlier run folder kept in results/<paper>/.previous,
# the run (its log beside it), then its graded tables (the run's own report's "Published numbers"
# and "Claims", as `rankbench check` prints them); a config that cannot run (its data absent)
# says why in one line and the others go on
reproduce/%: install
	@cfg=configs/$*.yaml; out=results/$*; dir=$$(dirname $$out); mkdir -p $$dir; \
	if [ -e $$out ]; then mkdir -p $$dir/.previous; mv $$out $$dir/.previous/$$(basename $$out)-$$(date +%Y%m%d-%H%M%S); fi; \
	if $(BIN)/rankbench run $$cfg --data-root $(DATA) --jobs $(JOBS) --out $$out --quiet > $$out.log 2>&1; then \
	  echo "== $$cfg"; awk '/^## (Published numbers|Claims)$$/ {p = 1; n++; next} /^## / {p = 0} \
	    p && (NF || last) {print} p {last = NF} END {if (!n) print "nothing to grade: no published numbers or claims"}' $$out.log; \
	else echo "== $$cfg"; echo "   not run: $$(tail -1 $$out.log)"; fi

# a paper's report (report-<paper>): after its configs, its report, its note and (AFTER_<paper>)
# its figures from the runs made; reproduce-<paper>: its configs and then that
define reproduce
report-$(1): $(patsubst configs/%.yaml,reproduce/%,$(wildcard configs/$(1)/*.yaml))
	@runs=$$$$(for c in configs/$(1)/*.yaml; do d=results/$(1)/$$$$(basename $$$$c .yaml); \
	  [ -f $$$$d/config.yaml ] && echo $$$$d; done); \
	[ -z "$$$$runs" ] || { $(BIN)/rankbench collect $$$$runs --out results/$(1)/REPORT.md; \
	  $(BIN)/rankbench notes $(1) $$$$runs --out docs/papers/$(1).md; $$(if $$(AFTER_$(1)),$$(AFTER_$(1));) }
reproduce-$(1): report-$(1)
endef
$(foreach p,$(PAPERS),$(eval $(call reproduce,$(p))))

yuli-figures: install  ## Figures 2-4 and 6 of Yu & Li (distances, 3-D embeddings) from the runs of make reproduce-yuli
	$(BIN)/rankbench figures yuli $(call runs_of,yuli) --data-root $(DATA) --out results/yuli/figures

merler-figures: install  ## Figures 6, 7 and 9 and the lambda trade-off of Merler et al. from the runs of make reproduce-merler
	$(BIN)/rankbench figures merler $(call runs_of,merler) --out results/merler/figures

yan-figures: install  ## Figures 3 and 6 of Yan et al. from the run folders of make reproduce-yan
	$(BIN)/rankbench figures yan $(call runs_of,yan) --data-root $(DATA) --out results/yan/figures

# reproduce-all runs the configs JOBS at a time, each in one process on one core (BLAS pinned to one
# thread, as a worker of --jobs is): a run's serial work (features, its report) overlaps another's
# fits. make walks its goals in the order below, starting each config as a slot frees, and looks
# at a paper's report (report-<paper>) once when the walk reaches it, then again only after every
# config has started; so each report is placed after enough other configs that its own are done
# by then, and runs beside the later configs instead of after the last. The longest first (their
# time on one core in make reproduce-all on 2026-11-29, JOBS=2, the feature and base-model caches
# warm but caviar4reid_multi's (10 s): 803, 320, 268, 233, 255, 213, 172, 226, 210, 142, 180, 158, 191,
# 77, 72 s; an empty cache adds each config's features and base models), so that the last to finish
# are short; caviar4reid_single, which reads caviar4reid_multi's features from the cache, and
# viper_p316_10trials, whose first five trials are viper_p316's, each well after the other. Then
# merler's other configs (16-150 s), i-LIDS's (a few seconds each when its data is absent), sharaf's
# and yan's reports, yuli's configs (4-81 s) with merler's report (~50 s) after its longest eight,
# prosser's last two (82 and 66 s) with yuli's report (~30 s) after them; every paper config is
# named here (tests/test_reproduce_schedule.py), so none is left to run alone at the end. Each
# config's output is printed whole when it is done.
REPRODUCE_FIRST := merler/synthetic_trecvid merler/synthetic_fig9_regularizers prosser/caviar4reid_multi \
  prosser/viper_p316 prosser/caviar4reid_single sharaf/osr sharaf/pubfig prosser/viper_p316_10trials \
  yan/towncentre5_methods prosser/viper_p432 merler/synthetic_trecvid2006 yan/towncentre6_methods merler/corel16k \
  yan/towncentre5_types yan/towncentre6_types
REPRODUCE_THEN := merler/synthetic_trecvid_operating_point yan/spirals merler/towncentre_lambda merler/corel16k_lambda merler/towncentre merler/corel5k \
  merler/osr_scenes_lambda merler/corel5k_lambda merler/osr_scenes $(patsubst configs/%.yaml,%,$(wildcard configs/prosser/ilids_*.yaml)) \
  report-sharaf report-yan \
  yuli/umist_table5_n yuli/umist_table2_s yuli/authors_umist_table4_d yuli/umist_table3_K yuli/umist_table4_d \
  yuli/authors_umist_table5_n yuli/authors_umist_table3_K yuli/authors_fgnet_table7_n report-merler \
  yuli/authors_fgnet_table6_K yuli/fgnet_table6_K yuli/fgnet_table7_n yuli/authors_umist_table2_s \
  prosser/viper_p474 prosser/viper_p532 report-yuli
REPRODUCE_PAPERS := sharaf yan merler yuli prosser
reproduce-all: install  ## every paper's configs, then results/REPORT.md and REPORT.html
	@OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(MAKE) --no-print-directory -j$(JOBS) \
	  --output-sync=target JOBS=1 $(addprefix reproduce/,$(REPRODUCE_FIRST)) \
	  $(foreach g,$(REPRODUCE_THEN),$(if $(findstring /,$(g)),reproduce/$(g),$(g))) $(addprefix reproduce-,$(REPRODUCE_PAPERS))
	$(BIN)/rankbench collect $(foreach p,$(PAPERS),$(call runs_of,$(p))) --out results/REPORT.md

bench: install  ## speed/memory benchmarks, each side by side with a peer or the old code (ARGS=--quick: CI's check)
	@fails=""; for s in scripts/bench_*.py; do echo "== $$s $(ARGS)"; \
	  $(BIN)/python $$s --data-root $(DATA) $(ARGS) || fails="$$fails $$s"; done; \
	[ -z "$$fails" ] || { echo "bench failed:$$fails"; exit 1; }

bench-quick: install  ## every benchmark in its quick mode: does it still run to the end? (CI; timings mean nothing)
	@$(MAKE) --no-print-directory bench ARGS=--quick

docs: install  ## the documentation site into site/ (warnings are errors; the reference is generated from the code)
	$(BIN)/pip install --quiet -e '.[docs]'
	$(BIN)/mkdocs build --strict --site-dir site

demo-dask: install  ## 1000-setting sweep on a 2-worker loopback Dask cluster, one worker killed mid-run
	$(BIN)/python scripts/demo_dask.py --out results/demo_dask

clean:
	rm -rf $(VENV) results/regress .pytest_cache site
