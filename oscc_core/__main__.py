"""``python -m oscc_core run <chapter> -p name value ... [-o outdir]``: see `oscc_core.reporting.runner`."""
import sys

from oscc_core.reporting.runner import main

if __name__ == "__main__":
    sys.exit(main())
