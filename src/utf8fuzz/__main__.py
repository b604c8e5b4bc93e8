import sys

from utf8fuzz.cli import main

sys.exit(main())
