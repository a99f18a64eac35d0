# SPDX-License-Identifier: MIT
# Post-process rst2man output of Documentation/man/*.rst, whose title is
# "name(N)" followed by a NAME section: rst2man turns the title into a
# second, empty NAME section and a .TH without a section.  Keep the page's
# own NAME section and write ".TH NAME N".  Variables: name, sec.
/^\.TH / { printf ".TH \"%s\" \"%s\" \"\" \"ccom\" \"ccom manual\"\n", toupper(name), sec; next }
/^\.SH NAME$/ && !seen { seen = 1; skip = 1; next }
skip == 1 { skip = 0; next }
{ print }
