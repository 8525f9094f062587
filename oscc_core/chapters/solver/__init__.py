"""Chapter 05 (solver): the learners trained on Leduc and evaluated exactly."""
