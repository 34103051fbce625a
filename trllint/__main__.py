import sys

from trllint.cli import main

sys.exit(main())
