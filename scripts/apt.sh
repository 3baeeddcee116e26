# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by scripts/get-base.sh, scripts/man.sh and scripts/qemu-plugins.sh:
# what they share of apt.  Each downloads with a private configuration of its
# own (sources list, lists, cache) and never touches the system's apt state;
# the system's sources only say where Debian's mirror is.
#
#   apt_entries		every enabled entry of the system's sources
#   debian_mirror	the mirror of the release's plain Debian suite
#   apt_private DIR	a private configuration in DIR: sets apt_opts
#
# APT_ETC (default /etc/apt) is the configuration read, for tests.

# shellcheck disable=SC2034 # used by the scripts that source this file
apt_keyring=/usr/share/keyrings/debian-archive-keyring.gpg

# Every enabled entry of the system's apt sources: the deb822 files in
# sources.list.d first, then the one-line sources.list files, in that order.
# One line per URI and suite: "TYPE<TAB>URI<TAB>SUITE<TAB>COMPONENTS<TAB>
# SIGNED-BY<TAB>FILE" (COMPONENTS space-separated, SIGNED-BY "" when the
# entry names no keyring).
apt_entries() {
	perl -e '
		my $etc = shift;
		sub out { print join("\t", @_), "\n"; }
		# deb822: stanzas separated by empty lines, continuation lines
		# start with white space, field names in any case, comments
		# anywhere.
		for my $f (sort glob("$etc/sources.list.d/*.sources")) {
			open(my $fh, "<", $f) or next;
			local $/ = "";
			while (my $st = <$fh>) {
				$st =~ s/^#.*\n//mg;
				$st =~ s/\n[ \t]+/ /g;
				my %h;
				$h{lc $1} = $2 while $st =~ /^([A-Za-z-]+):[ \t]*(.*?)[ \t]*$/mg;
				next if ($h{enabled} // "yes") =~ /^no$/i;
				for my $t (split(" ", $h{types} // "")) {
					for my $u (split(" ", $h{uris} // "")) {
						out($t, $u, $_, $h{components} // "", $h{"signed-by"} // "", $f)
							for split(" ", $h{suites} // "");
					}
				}
			}
		}
		for my $f ("$etc/sources.list", sort glob("$etc/sources.list.d/*.list")) {
			open(my $fh, "<", $f) or next;
			while (<$fh>) {
				s/#.*//;
				next unless /^\s*(deb(?:-src)?)\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)\s*(.*?)\s*$/;
				my ($t, $o, $u, $s, $c) = ($1, $2 // "", $3, $4, $5);
				my ($k) = $o =~ /(?:^|\s)signed-by=(\S+)/;
				out($t, $u, $s, $c, $k // "", $f);
			}
		}' "${APT_ETC:-/etc/apt}"
}

# The Debian mirror of the system's apt sources: the first URI of a "deb"
# entry for a plain Debian suite (the release's codename or stable, testing,
# ...; not -security, -updates, -backports or another vendor's suite), not a
# CD-ROM.  Prints "URI<TAB>FILE"; fails if there is none.
debian_mirror() {
	local codename

	codename=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release 2>/dev/null | tr -d '"' | head -n 1)
	apt_entries | awk -F '\t' -v codename="$codename" '
		BEGIN {
			n = split("stable oldstable oldoldstable testing unstable sid bullseye bookworm trixie forky duke", w, " ")
			for (i = 1; i <= n; i++) plain[w[i]] = 1
			if (codename != "") plain[codename] = 1
		}
		$1 == "deb" && ($3 in plain) && $2 !~ /^cdrom:/ { print $2 "\t" $6; found = 1; exit }
		END { exit !found }'
}

# apt_private DIR: the directories of a private apt configuration in DIR
# (DIR/etc/sources.list is the caller's to write) and apt_opts, the options
# that make apt-get use it alone.
apt_private() {
	mkdir -p "$1/etc/sources.list.d" "$1/etc/preferences.d" "$1/lists/partial" \
		"$1/cache/archives/partial" "$1/dl" || return
	# shellcheck disable=SC2034 # used by the scripts that source this file
	apt_opts=(-o "Dir::Etc::sourcelist=$1/etc/sources.list"
		-o "Dir::Etc::sourceparts=$1/etc/sources.list.d"
		-o "Dir::State::Lists=$1/lists"
		-o "Dir::Cache=$1/cache"
		-o "Dir::Etc::preferencesparts=$1/etc/preferences.d")
}
