import sys

from trllint.app.cli import main

sys.exit(main())
