"""``python -m tagger.onnx_export``: an older name of this command: it runs
:mod:`tagger.language.onnx_export`."""

import sys

from .language.onnx_export import main

if __name__ == "__main__":
    sys.exit(main())
